import type { Worker } from 'node:worker_threads';
import type { Server as HttpServer } from 'node:http';
import type { Server } from 'node:net';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import type { Config } from './config.js';
import { startWorker } from './lib/worker-thread.js';

type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

/** What an extra HTTP thread is started with: plain data and shared memory only. */
export interface HttpThreadData {
  config: Config;
  /** The main thread's listening socket: every thread accepts from it. */
  fd: number;
  /** The process's SQLite write lock (db/write-lock.ts). */
  writeLock: SharedArrayBuffer;
  /** The shared rate-limit table, unless Redis holds the budget. */
  rateLimit: SharedArrayBuffer | undefined;
  /** Connection counts per thread (http/connection-balance.ts); the main thread is index 0. */
  connections: SharedArrayBuffer;
  /** This thread's index in `connections` (set per thread by HttpThreads.start). */
  index: number;
}

/** Thread → main. */
export type FromThread =
  | { type: 'listening' }
  | { type: 'outbox' }
  | { type: 'metrics'; id: number }
  | { type: 'metrics-json'; id: number; json: MetricsJson }
  | { type: 'drained' };

/** Main → thread. */
export type ToThread = { type: 'collect'; id: number } | { type: 'metrics-text'; id: number; text: string } | { type: 'drain' };

export interface ThreadHooks {
  /** A thread committed events: wake the in-process dispatcher. */
  onOutbox(): void;
  /** The main thread's own registry, summed with the threads'. */
  ownMetrics(): Promise<MetricsJson>;
  /** A thread failed: its teardown may have closed the shared socket, so the process must stop. */
  onFatal(err: Error): void;
}

/**
 * The listening socket's descriptor. Node has no public accessor: `_handle.fd` is what Node's own cluster
 * module and `listen({ fd })` work with; -1 where descriptors don't exist (Windows), where one thread serves.
 */
export function listeningFd(server: Server): number {
  const handle = (server as unknown as { _handle?: { fd?: number } })._handle;
  return typeof handle?.fd === 'number' ? handle.fd : -1;
}

/**
 * Stops a thread's serving without closing the shared listening socket: new connections are dropped as they
 * arrive (the client sees a reset and goes elsewhere), requests in flight are answered (with
 * `Connection: close`, set by the caller), idle keep-alive connections are closed, until none is left.
 * Closing the socket instead would close the descriptor every thread holds: another thread's later close of
 * that same number could then hit a descriptor opened since (a new outgoing socket), and it did (SIGABRT at
 * exit in test/api/webhook-processes.test.ts). The socket is closed once, when the process exits.
 */
export async function drainServer(server: Server): Promise<void> {
  server.prependListener('connection', (socket) => socket.destroy());
  const open = () => new Promise<number>((resolve) => server.getConnections((_err, n) => resolve(n ?? 0)));
  while ((await open()) > 0) {
    (server as HttpServer).closeIdleConnections();
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * The extra HTTP threads of `crm serve` (HTTP_THREADS), seen from the main thread. Each runs the whole app
 * on its own database connections and accepts connections from the main thread's listening socket, which
 * the kernel hands to whichever thread is waiting; the rate limit and the SQLite write lock are in shared
 * memory, the webhook dispatcher and the scheduler stay in the main thread (threads wake it after commits),
 * and GET /metrics sums every thread's counts. A thread lives as long as the process: no handle on the shared
 * socket is closed before the process exits (see drainServer), so a thread that fails stops the process.
 */
export class HttpThreads {
  private readonly threads: Worker[] = [];
  private readonly pending = new Map<number, (json: MetricsJson) => void>();
  private nextId = 0;
  private draining = false;

  private constructor(private readonly hooks: ThreadHooks) {}

  /** Starts `count` threads; `data.index` is the main thread's (0), each thread gets the next one. */
  static async start(count: number, data: HttpThreadData, hooks: ThreadHooks): Promise<HttpThreads> {
    const threads = new HttpThreads(hooks);
    await Promise.all(Array.from({ length: count }, (_, i) => threads.startOne({ ...data, index: data.index + 1 + i })));
    return threads;
  }

  private startOne(data: HttpThreadData): Promise<void> {
    const thread = startWorker(import.meta.url, 'http-thread', data);
    this.threads.push(thread);
    return new Promise((resolve, reject) => {
      let listening = false;
      thread.on('message', (message: FromThread) => {
        if (message.type === 'listening') {
          listening = true;
          resolve();
        } else this.onMessage(thread, message);
      });
      thread.on('error', (err) => (listening ? this.hooks.onFatal(err) : reject(err)));
      thread.on('exit', (code) => {
        const err = new Error(`HTTP thread ${thread.threadId} exited with code ${code}`);
        if (!listening) reject(err);
        else if (!this.draining) this.hooks.onFatal(err);
      });
    });
  }

  private onMessage(thread: Worker, message: FromThread): void {
    if (message.type === 'outbox') this.hooks.onOutbox();
    else if (message.type === 'metrics') {
      void this.metricsText().then(
        (text) => thread.postMessage({ type: 'metrics-text', id: message.id, text } satisfies ToThread),
        () => thread.postMessage({ type: 'metrics-text', id: message.id, text: '' } satisfies ToThread),
      );
    } else if (message.type === 'metrics-json') {
      this.pending.get(message.id)?.(message.json);
      this.pending.delete(message.id);
    }
  }

  /** The Prometheus exposition of the whole process: every thread's counts summed. */
  async metricsText(): Promise<string> {
    const fromThreads = this.threads.map(
      (thread) =>
        new Promise<MetricsJson>((resolve) => {
          const id = this.nextId++;
          this.pending.set(id, resolve);
          thread.postMessage({ type: 'collect', id } satisfies ToThread);
        }),
    );
    const all = await Promise.all([this.hooks.ownMetrics(), ...fromThreads]);
    return AggregatorRegistry.aggregate(all).metrics();
  }

  /** Stops the threads' serving (drainServer); each closes its database, then reports. */
  async drain(): Promise<void> {
    this.draining = true;
    await Promise.all(
      this.threads.map(
        (thread) =>
          new Promise<void>((resolve) => {
            const onMessage = (message: FromThread) => {
              if (message.type !== 'drained') return;
              thread.off('message', onMessage);
              resolve();
            };
            thread.on('message', onMessage);
            thread.once('exit', () => resolve());
            thread.postMessage({ type: 'drain' } satisfies ToThread);
          }),
      ),
    );
  }
}
