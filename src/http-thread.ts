import { parentPort, workerData } from 'node:worker_threads';
import { buildApp } from './app.js';
import { closeContext, createContext } from './context.js';
import { openDatabase } from './db/database.js';
import { WriteLock } from './db/write-lock.js';
import { balanceConnections, ConnectionBalance } from './http/connection-balance.js';
import { ConnectionDrain } from './http/connection-drain.js';
import { flushLog } from './http/logging.js';
import { SharedMemoryRateLimiter } from './http/rate-limit.js';
import { stopAccepting, type FromThread, type HttpThreadData, type ToThread } from './http-threads.js';
import { systemClock } from './lib/clock.js';

// One extra HTTP thread of `crm serve` (see http-threads.ts): the whole app on its own connections,
// accepting from the main thread's listening socket.

const data = workerData as HttpThreadData;
const port = parentPort!;
const post = (message: FromThread) => port.postMessage(message);

const ctx = await createContext(data.config, {
  httpThread: true,
  database: openDatabase({ ...data.config.database, writeLock: new WriteLock(data.writeLock) }),
  ...(data.rateLimit ? { rateLimiter: new SharedMemoryRateLimiter(data.rateLimit, systemClock) } : {}),
});

// Commits here wake the dispatcher in the main thread: one message per turn however many commits it saw.
let outboxQueued = false;
ctx.outbox.subscribe(() => {
  if (outboxQueued) return;
  outboxQueued = true;
  setImmediate(() => {
    outboxQueued = false;
    post({ type: 'outbox' });
  });
});

let nextMetricsId = 0;
const metricsWaiting = new Map<number, (text: string) => void>();
const stopping = new Int32Array(data.stopping);
const app = await buildApp(ctx, {
  stopping: () => Atomics.load(stopping, 0) === 1,
  metricsExposition: () =>
    new Promise<string>((resolve) => {
      const id = nextMetricsId++;
      metricsWaiting.set(id, resolve);
      post({ type: 'metrics', id });
    }),
});

let draining = false;
balanceConnections(app, new ConnectionBalance(data.connections, data.index), () => draining);
const connections = new ConnectionDrain(app.server);

/** Takes no more connections from the shared socket, which the main thread closes once every thread has said so. */
function stopTakingConnections(): void {
  draining = true;
  stopAccepting(app.server);
  post({ type: 'stopped-accepting' });
}

/** Answers what is in flight, closes every connection as it goes idle, then the database. */
async function drain(): Promise<void> {
  await connections.finish();
  await closeContext(ctx);
  // The app is never closed here (that would close the shared socket): its buffered log lines go out now.
  flushLog(app.log);
  post({ type: 'drained' });
}

port.on('message', (message: ToThread) => {
  if (message.type === 'collect') {
    void ctx.metrics.registry.getMetricsAsJSON().then((json) => post({ type: 'metrics-json', id: message.id, json }));
  } else if (message.type === 'metrics-text') {
    metricsWaiting.get(message.id)?.(message.text);
    metricsWaiting.delete(message.id);
  } else if (message.type === 'stop-accepting') stopTakingConnections();
  else if (message.type === 'drain') void drain();
});

await app.ready();
// The socket is the main thread's: listening on its descriptor here, never closing it (see stopAccepting).
app.server.listen({ fd: data.fd }, () => post({ type: 'listening' }));
