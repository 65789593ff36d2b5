import type { Worker } from 'node:worker_threads';
import type { Server } from 'node:net';
import { getSystemErrorName } from 'node:util';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import type { Config } from './config.js';
import { startWorker } from './lib/worker-thread.js';

type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

/** What an extra HTTP thread is started with: plain data and shared memory only. */
export interface HttpThreadData {
  config: Config;
  /** The main thread's listening socket: every thread accepts from it. */
  fd: number;
  /** One Int32: 1 once the process is shutting down (every thread's /ready answers 503). */
  stopping: SharedArrayBuffer;
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
  | { type: 'stopped-accepting' }
  | { type: 'drained' };

/** Main → thread. */
export type ToThread =
  | { type: 'collect'; id: number }
  | { type: 'metrics-text'; id: number; text: string }
  | { type: 'stop-accepting' }
  | { type: 'drain' };

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
 * How a multi-thread server stops accepting on SIGTERM. Every thread's listening handle wraps the same
 * descriptor number (Node can't duplicate one), so closing any handle closes the socket for all, while the
 * other threads' event loops still poll that number: a descriptor opened since under the same number (an
 * outgoing socket) is then polled, or closed, as if it were the socket, and that was a SIGABRT at exit
 * (test/api/webhook-processes.test.ts). Node closes every handle of a worker thread when the thread ends, at
 * process exit too; it closes none of the main thread's then. Hence, in this order:
 * 1. each extra thread stops polling the socket without closing it (stopAccepting) and says so;
 * 2. the main thread closes it, once: from then on the kernel refuses new connections (ECONNREFUSED, nothing
 *    was sent), as with one thread. Until then every connection accepted is served, with `Connection: close`;
 *    a connection the kernel had queued but no thread had yet accepted at that instant is reset, as when any
 *    listening socket closes (the main thread keeps accepting until it closes, so the queue stays short);
 * 3. every thread answers what it has in flight (ConnectionDrain), then closes its database;
 * 4. the process exits, and each extra thread's teardown closes the old number again: by then it is free or
 *    names a descriptor nothing uses any more (the threads have closed their databases, the main thread is
 *    exiting and runs no more I/O).
 * Destroying new connections instead while the socket stayed open meant clients were accepted, then reset,
 * for the whole drain (seconds): a client that had sent a POST could not know whether it was applied.
 */
export function stopAccepting(server: Server): void {
  // A handle opened on an existing descriptor (listen({ fd })) is readable in libuv, and the listening watcher
  // is its read watcher: uv_read_start then uv_read_stop takes the descriptor out of this thread's event loop
  // and leaves it open. The main thread's own handle (bound, not opened) refuses this, with ENOTCONN.
  const handle = (server as unknown as { _handle: { readStart(): number; readStop(): number } })._handle;
  const err = handle.readStart();
  if (err !== 0) throw new Error(`this thread cannot stop polling the shared listening socket: ${getSystemErrorName(err)}`);
  handle.readStop();
}

/**
 * The extra HTTP threads of `crm serve` (HTTP_THREADS), seen from the main thread. Each runs the whole app
 * on its own database connections and accepts connections from the main thread's listening socket, which
 * the kernel hands to whichever thread is waiting; the rate limit and the SQLite write lock are in shared
 * memory, the webhook dispatcher and the scheduler stay in the main thread (threads wake it after commits),
 * and GET /metrics sums every thread's counts. A thread lives as long as the process: its handle on the shared
 * socket is closed only when the process exits (see stopAccepting), so a thread that fails stops the process.
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

  /**
   * Every thread stops taking connections from the shared socket (stopAccepting). True once all have said so;
   * false if one ended first: its teardown closed the socket already, and closing it again could close another
   * descriptor given the same number since.
   */
  async stopAccepting(): Promise<boolean> {
    return (await this.ask({ type: 'stop-accepting' }, 'stopped-accepting')).every(Boolean);
  }

  /** Every thread answers what it has in flight (ConnectionDrain), closes its database, then reports. */
  async drain(): Promise<void> {
    await this.ask({ type: 'drain' }, 'drained');
  }

  /** Posts `request` to every thread; per thread, true when it answered `reply`, false when it exited first. */
  private ask(request: ToThread, reply: FromThread['type']): Promise<boolean[]> {
    this.draining = true;
    return Promise.all(
      this.threads.map(
        (thread) =>
          new Promise<boolean>((resolve) => {
            const onMessage = (message: FromThread) => {
              if (message.type !== reply) return;
              thread.off('message', onMessage);
              resolve(true);
            };
            thread.on('message', onMessage);
            thread.once('exit', () => resolve(false));
            thread.postMessage(request);
          }),
      ),
    );
  }
}
