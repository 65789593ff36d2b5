import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** performance.timeOrigin-based milliseconds when the body was complete. */
  at: number;
}

/** Answers one request; the default is 200 "ok". `n` counts requests to this path, from 1. */
export type Behavior = (res: ServerResponse, n: number, req: IncomingMessage) => void;

/** A real HTTP receiver on 127.0.0.1 and a random port, recording every request per path. */
export class Receiver {
  private readonly received: Received[] = [];
  private readonly behaviors = new Map<string, Behavior>();
  private readonly counts = new Map<string, number>();
  private readonly sockets = new Set<Socket>();
  private constructor(private readonly server: Server, readonly port: number) {}

  static async start(): Promise<Receiver> {
    let self: Receiver | undefined;
    const server = createServer((req, res) => self!.handle(req, res));
    server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    self = new Receiver(server, (server.address() as AddressInfo).port);
    server.on('connection', (socket) => {
      self!.sockets.add(socket);
      socket.on('close', () => self!.sockets.delete(socket));
    });
    return self;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  on(path: string, behavior: Behavior): void {
    this.behaviors.set(path, behavior);
  }

  requests(path?: string): Received[] {
    return path === undefined ? [...this.received] : this.received.filter((r) => r.path === path);
  }

  /** Connections open to the receiver now (a sender that died leaves none once its last bytes are read). */
  openConnections(): number {
    return this.sockets.size;
  }

  /** Waits until `path` has received at least `count` requests. */
  async waitFor(path: string, count: number, timeoutMs = 10_000): Promise<Received[]> {
    return eventually(async () => {
      const got = this.requests(path);
      if (got.length < count) throw new Error(`${path}: ${got.length} of ${count} requests after ${timeoutMs} ms`);
      return got;
    }, timeoutMs);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0]!;
      const n = (this.counts.get(path) ?? 0) + 1;
      this.counts.set(path, n);
      this.received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: performance.timeOrigin + performance.now() });
      const behavior = this.behaviors.get(path);
      if (behavior) behavior(res, n, req);
      else res.end('ok');
    });
  }
}

/**
 * Verifies a delivery with both ecosystems' verifiers (Stripe's constructEvent on X-Service-Signature,
 * Standard Webhooks on webhook-*), exactly as a subscriber would; throws if either rejects it.
 */
export function verifyBoth(r: Received, secret: string): any {
  const stripeEvent = Stripe.webhooks.constructEvent(r.body, String(r.headers['x-service-signature']), secret);
  const standard = new Webhook(secret).verify(r.body, {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  });
  if (JSON.stringify(standard) !== JSON.stringify(stripeEvent)) throw new Error('the two verifiers disagree on the body');
  return stripeEvent;
}

/** Retries `fn` until it stops throwing, or rethrows its last error after `timeoutMs`. */
export async function eventually<T>(fn: () => Promise<T> | T, timeoutMs = 15_000, intervalMs = 10): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }
}
