/**
 * In-process wake-up for outbox consumers (the webhook dispatcher): notified after a transaction that may
 * have written events commits, so delivery starts at once instead of at the next poll. Consumers still
 * poll, so a missed signal (or another process's commit) only delays, never loses, an event.
 */
export class OutboxSignal {
  private readonly listeners = new Set<() => void>();

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  notify(): void {
    for (const listener of this.listeners) listener();
  }
}
