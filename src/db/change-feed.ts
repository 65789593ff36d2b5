import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { KEY_LOOKUP_CHANNEL } from './migrations/0013_key_lookup_notify.js';

/** How long a revocation waits for its own notification to come back before it answers anyway. */
const SYNC_TIMEOUT_MS = 2_000;
/** Pause before listening again after the listening connection failed. */
const RECONNECT_MS = 1_000;
const SYNC_PREFIX = 'sync:';

/**
 * PostgreSQL's counterpart of SQLite's `data_version` for the key lookup cache: one connection per database
 * handle LISTENs on the channel the key tables' triggers notify (migration 0013), and `version()` moves
 * whenever one of those tables changed in this schema, in any instance or process.
 *
 * Safety first: while the connection is not listening (starting, broken, reconnecting) `version()` returns a
 * new number on every call, so nothing is served from a cache that could have missed a notification; a
 * reconnection also moves it. A notification is delivered after its commit, so a revocation could reach
 * another instance a moment after the revoking request answered: `sync()` closes that gap for the revoking
 * instance — it sends a marker on the same channel and waits until it comes back, by which time PostgreSQL
 * has queued the revocation's notification (committed earlier) to every listener.
 */
export class ChangeFeed {
  private counter = 0;
  private listening = false;
  private client: pg.Client | undefined;
  /** The schema of this connection's api_keys table; notifications of other schemas of the database are ignored. */
  private schema: string | undefined;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;
  private readonly waiting = new Map<string, () => void>();

  constructor(
    private readonly connect: () => pg.Client,
    private readonly notify: (payload: string) => Promise<unknown>,
  ) {
    void this.listen();
  }

  version(): number {
    return this.listening ? this.counter : ++this.counter;
  }

  async sync(): Promise<void> {
    if (!this.listening) return;
    const marker = SYNC_PREFIX + randomUUID();
    let timer: NodeJS.Timeout | undefined;
    const seen = new Promise<void>((resolve) => {
      this.waiting.set(marker, resolve);
      timer = setTimeout(resolve, SYNC_TIMEOUT_MS);
    });
    try {
      await this.notify(marker);
      await seen;
    } finally {
      clearTimeout(timer);
      this.waiting.delete(marker);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    this.listening = false;
    await this.client?.end().catch(() => undefined);
  }

  private async listen(): Promise<void> {
    const client = this.connect();
    this.client = client;
    client.on('notification', (n) => this.received(n.payload ?? ''));
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`listen ${KEY_LOOKUP_CHANNEL}`);
      // The tables are resolved through the same search_path as the pool's; not migrated yet: try again later.
      const { rows } = await client.query<{ schema: string }>(
        `select n.nspname as schema from pg_class c join pg_namespace n on n.oid = c.relnamespace where c.oid = to_regclass('api_keys')`,
      );
      if (!rows[0]) throw new Error('api_keys does not exist yet');
      if (this.client !== client || this.closed) return;
      this.schema = rows[0].schema;
      this.counter++;
      this.listening = true;
    } catch {
      this.lost(client);
    }
  }

  private received(payload: string): void {
    if (payload.startsWith(SYNC_PREFIX)) this.waiting.get(payload)?.();
    else if (payload === this.schema) this.counter++;
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.listening = false;
    this.client = undefined;
    void client.end().catch(() => undefined);
    if (!this.closed) this.retry = setTimeout(() => void this.listen(), RECONNECT_MS).unref();
  }
}
