import type { Server } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** Connections a thread may hold above an even share before it asks one client to reconnect. */
const SLACK = 1;
/** At most one connection ended per thread per this many milliseconds, so a reconnect can land elsewhere. */
const SHED_INTERVAL_MS = 20;

/**
 * Keeps the threads of a multi-thread server (HTTP_THREADS) holding about the same number of keep-alive
 * connections. The kernel gives a new connection to whichever thread is waiting: a burst of connections (a
 * load balancer's pool, a benchmark's clients) can land mostly on one thread, which then serves most of the
 * traffic for the connections' whole life while another idles. Counts live in shared memory; a thread above
 * its share answers one request with `Connection: close`, a normal end of a keep-alive connection that
 * clients follow by reconnecting, and the new connection goes to a thread that is waiting — usually the less
 * busy one.
 */
export class ConnectionBalance {
  private readonly counts: Int32Array;
  private lastShed = 0;

  /** `buffer`: from createBuffer(threads), the same in every thread; `index`: this thread's slot. */
  constructor(
    buffer: SharedArrayBuffer,
    private readonly index: number,
  ) {
    this.counts = new Int32Array(buffer);
  }

  static createBuffer(threads: number): SharedArrayBuffer {
    return new SharedArrayBuffer(threads * 4);
  }

  /** Counts this thread's connections as they open and close. */
  track(server: Server): void {
    server.on('connection', (socket) => {
      Atomics.add(this.counts, this.index, 1);
      socket.once('close', () => Atomics.sub(this.counts, this.index, 1));
    });
  }

  /** True when the response being sent should end its connection (this thread holds more than its share). */
  shouldShed(now: number): boolean {
    const mine = Atomics.load(this.counts, this.index);
    let total = 0;
    for (let i = 0; i < this.counts.length; i++) total += Atomics.load(this.counts, i);
    if (mine <= Math.ceil(total / this.counts.length) + SLACK || now - this.lastShed < SHED_INTERVAL_MS) return false;
    this.lastShed = now;
    return true;
  }
}

/**
 * Counts the app's connections and ends one (`Connection: close` on a response) when this thread holds more
 * than its share, or every one while `ending()` (a thread draining for shutdown).
 */
export function balanceConnections(app: FastifyInstance, balance: ConnectionBalance, ending: () => boolean = () => false): void {
  balance.track(app.server);
  app.addHook('onRequest', (_request, reply, done) => {
    if (ending() || balance.shouldShed(Date.now())) reply.header('connection', 'close');
    done();
  });
}
