import { Server as NetServer } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { closeContext, createContext, type AppContext, type ContextOverrides } from './context.js';
import { openDatabase } from './db/database.js';
import { registerWalBuffer } from './db/wal-buffer.js';
import { WriteLock } from './db/write-lock.js';
import { balanceConnections, ConnectionBalance } from './http/connection-balance.js';
import { ConnectionDrain } from './http/connection-drain.js';
import { flushLog } from './http/logging.js';
import { SharedMemoryRateLimiter } from './http/rate-limit.js';
import { HttpThreads, listeningFd, type HttpThreadData } from './http-threads.js';
import { systemClock } from './lib/clock.js';
import { startReminderScheduler } from './modules/objects/reminders.service.js';
import { startTrashPurger, TRASH_PURGE_INTERVAL_MS } from './modules/shared/trash-purge.service.js';
import { WebhookDispatcher } from './modules/webhooks/dispatcher.js';
import { publishCommits } from './modules/webhooks/pg-wakeup.js';

/** How often the in-process scheduler looks for due reminders. */
const REMINDER_INTERVAL_MS = 30_000;

export interface RunningServer {
  app: FastifyInstance;
  ctx: AppContext;
  /** The in-process webhook dispatcher (DISPATCHER=inline, the default). */
  dispatcher: WebhookDispatcher | undefined;
  address: string;
  /** Stops serving and closes everything; with several HTTP threads the process must exit afterwards (stopAccepting). */
  close(): Promise<void>;
}

/** Shared memory for the extra HTTP threads: the SQLite write lock and, without Redis, the rate-limit table. */
function sharedState(config: Config) {
  return {
    stopping: new Int32Array(new SharedArrayBuffer(4)),
    writeLock: new WriteLock(),
    rateLimit: config.redisUrl ? undefined : SharedMemoryRateLimiter.createBuffer(),
    connections: ConnectionBalance.createBuffer(config.httpThreads),
  };
}

/**
 * V8 moves an allocation site's objects straight to the old generation once many of them have survived a
 * young-generation collection. Under a burst (start-up, a load spike) request objects do survive for a
 * moment, and in one run out of three or four a thread's sites were switched for good: that thread then
 * collected its old generation every ~1.7 s (GC traces: 2.5 MB promoted per scavenge instead of none), and
 * GET /leads/{id} lost a fifth of its rate. A request's objects never outlive the request, so the switch is
 * turned off (process-wide, before any thread starts). docs/performance.md has the traces.
 */
function tuneGarbageCollection(): void {
  setFlagsFromString('--no-allocation-site-pretenuring');
}

/**
 * Builds and listens, with the webhook dispatcher and the reminder scheduler in-process unless
 * DISPATCHER=off (then `crm worker` runs them), and HTTP_THREADS - 1 more threads serving the same socket
 * (http-threads.ts). SIGTERM/SIGINT turn `/ready` to 503 for SHUTDOWN_DELAY_MS (0 by default) while serving on,
 * then stop accepting, finish in-flight requests in every thread, let in-flight webhook attempts finish and
 * record them, then close the database.
 */
export async function startServer(config: Config, overrides: ContextOverrides = {}): Promise<RunningServer> {
  tuneGarbageCollection();
  // A database handed in (tests) is one connection: it can't be shared by threads.
  const shared = config.httpThreads > 1 && !overrides.database ? sharedState(config) : undefined;
  const ctx = await createContext(config, {
    ...overrides,
    ...(shared && { database: openDatabase({ ...config.database, writeLock: shared.writeLock }) }),
    ...(shared?.rateLimit && { rateLimiter: new SharedMemoryRateLimiter(shared.rateLimit, overrides.clock ?? systemClock) }),
  });
  let threads: HttpThreads | undefined;
  let dispatcher: WebhookDispatcher | undefined;
  let reminders: { stop(): Promise<void> } | undefined;
  let purger: { stop(): Promise<void> } | undefined;
  let unpublish: (() => void) | undefined;
  // Set at the start of a shutdown; every thread's /ready reads it.
  const stopping = shared?.stopping ?? new Int32Array(new SharedArrayBuffer(4));
  const app = await buildApp(ctx, {
    stopping: () => Atomics.load(stopping, 0) === 1,
    ...(shared && { metricsExposition: () => (threads ? threads.metricsText() : ctx.metrics.registry.metrics()) }),
  });
  let draining = false;
  if (shared) balanceConnections(app, new ConnectionBalance(shared.connections, 0), () => draining);
  const connections = shared ? new ConnectionDrain(app.server) : undefined;

  const start = async (): Promise<string> => {
    const address = await app.listen({ port: config.port, host: config.host });
    const fd = listeningFd(app.server);
    if (shared && fd >= 0) {
      const data: HttpThreadData = { config, fd, stopping: shared.stopping.buffer as SharedArrayBuffer, writeLock: shared.writeLock.buffer, rateLimit: shared.rateLimit, connections: shared.connections, index: 0 };
      threads = await HttpThreads.start(config.httpThreads - 1, data, {
        onOutbox: () => ctx.outbox.notify(),
        ownMetrics: () => ctx.metrics.registry.getMetricsAsJSON(),
        onFatal: (err) => {
          app.log.fatal({ err }, 'an HTTP thread failed; stopping');
          process.exit(1);
        },
      });
      app.log.info({ threads: config.httpThreads }, 'serving HTTP from several threads');
    } else if (shared) app.log.warn('HTTP_THREADS needs socket descriptors: serving from one thread');
    if (ctx.database.dialect === 'sqlite' && !registerWalBuffer()) {
      app.log.warn('native/build/wal-buffer.so is not built (npm run build found no C compiler): SQLite writes each WAL frame in two system calls, batches store ~15 % slower');
    }
    const log = app.log.child({ module: 'webhooks' });
    if (config.dispatcher === 'inline') {
      dispatcher = new WebhookDispatcher(ctx, { logger: log }).start();
      reminders = startReminderScheduler(ctx, { intervalMs: REMINDER_INTERVAL_MS, onError: (err) => app.log.error({ err }, 'reminder tick failed') });
      purger = startTrashPurger(ctx, { intervalMs: TRASH_PURGE_INTERVAL_MS, onError: (err) => app.log.error({ err }, 'trash purge failed') });
    } else if (ctx.database.dialect === 'postgres') {
      // Without an in-process dispatcher, `crm worker` processes deliver: on PostgreSQL, wake them per commit.
      unpublish = publishCommits(ctx, log);
    }
    return address;
  };
  const starting = start();
  /**
   * Stops serving. With several threads, every other thread stops polling the socket they share, then this one
   * closes it and all answer what they have in flight (see stopAccepting in http-threads.ts; the process must
   * exit afterwards); with one, Fastify closes it.
   */
  const stopServing = async () => {
    if (!threads || !connections) return app.close();
    draining = true;
    // net's close, not http's: that one also destroys every connection with no request under way yet, and a
    // connection just accepted has its request still unread (ConnectionDrain).
    if (await threads.stopAccepting()) NetServer.prototype.close.call(app.server);
    await Promise.all([connections.finish(), threads.drain()]);
    flushLog(app.log);
  };
  let closing: Promise<void> | undefined;
  // A signal during start-up (threads still booting) waits for it to finish, then shuts down as usual: first
  // SHUTDOWN_DELAY_MS of not being ready while still serving, for load balancers to stop sending requests.
  const close = () =>
    (closing ??= (async () => {
      await starting.catch(() => undefined);
      Atomics.store(stopping, 0, 1);
      if (config.shutdownDelayMs > 0) {
        app.log.info({ delayMs: config.shutdownDelayMs }, 'not ready: serving until the shutdown delay ends');
        await new Promise((resolve) => setTimeout(resolve, config.shutdownDelayMs));
      }
      await reminders?.stop();
      await purger?.stop();
      await stopServing();
      unpublish?.();
      await dispatcher?.stop();
      await closeContext(ctx);
    })());
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      app.log.info({ signal }, 'shutting down');
      close().then(
        () => process.exit(0),
        (err) => {
          app.log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
  const address = await starting;
  return { app, ctx, dispatcher, address, close };
}
