import type { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';

export interface BodyLimits {
  /** BODY_LIMIT_BYTES: the limit of every route but the batch routes. */
  single: number;
  /** The batch routes' larger limit. */
  batch: number;
}

/** After an answer sent before its body arrived, at most this many times the route's limit is still read (and discarded)… */
export const DRAIN_LIMIT_FACTOR = 4;
/** …for at most this long (HTTP_REQUEST_TIMEOUT_MS if shorter). */
const DRAIN_MAX_MS = 5_000;

/** The 413 of a route: its limit in bytes, and where a larger body fits (the batch routes) or what to do instead. */
export function payloadTooLarge(limits: BodyLimits, routeLimit: number): AppError {
  const hint = routeLimit < limits.batch ? `; the batch routes (…/batch) accept up to ${limits.batch} bytes` : '; send the items in smaller batches';
  return new AppError('PAYLOAD_TOO_LARGE', `The body is larger than this route's limit of ${routeLimit} bytes${hint}`, { headers: { connection: 'close' } });
}

/**
 * Reads (and discards) the rest of a body whose answer is sent before it arrived. Node ends a connection after
 * its last answer with `socket.destroySoon()`: destroyed as soon as the answer is flushed. A client still
 * sending its body would get a reset for its next bytes, which also throws away the answer waiting unread in its
 * receive buffer: it would see EPIPE or ECONNRESET, never the 413. Here the connection is half-closed instead
 * (FIN after the answer) and destroyed once the body has arrived or the client closed its side, or at the
 * latest once more than `maxBytes` arrived or `maxMs` passed. Bounded both ways, a drain holds a socket no
 * longer than a slow body within the limit could (HTTP_REQUEST_TIMEOUT_MS).
 */
function drainBeforeClosing(request: IncomingMessage, maxBytes: number, maxMs: number): void {
  const socket = request.socket;
  const destroy = () => socket.destroy();
  let drained = 0;
  // Reading the body now also keeps Node from discarding it unbounded (its `_dump` once the answer is sent).
  request.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > maxBytes) destroy();
  });
  socket.destroySoon = () => {
    if (request.complete) return Socket.prototype.destroySoon.call(socket);
    const timer = setTimeout(destroy, maxMs);
    socket.once('close', () => clearTimeout(timer));
    socket.once('end', destroy);
    request.once('end', destroy);
    socket.end();
  };
}

/**
 * Each route's body limit, enforced before the body is read: a declared Content-Length over it is a 413 (before
 * authentication: nothing of the body is worth a database round trip), and `Expect: 100-continue` gets that 413
 * instead of `100 Continue`. Node sends the 100 itself before any route is known unless the server handles
 * 'checkContinue'; here it does, and the 100 goes out once the request passed every check and its body is about
 * to be read (preParsing). An answer sent before the body has fully arrived (a 413, a 401 before the body was
 * read) closes the connection after a bounded drain (drainBeforeClosing), so the client can read it.
 */
export function registerBodyLimits(app: FastifyInstance, limits: BodyLimits, http: { requestTimeoutMs: number }): void {
  const awaitingContinue = new WeakSet<IncomingMessage>();
  app.server.on('checkContinue', (req: IncomingMessage, res) => {
    awaitingContinue.add(req);
    app.server.emit('request', req, res);
  });
  app.addHook('onRequest', (request, _reply, done) => {
    const limit = request.routeOptions.bodyLimit;
    if (Number(request.headers['content-length']) > limit) done(payloadTooLarge(limits, limit));
    else done();
  });
  app.addHook('preParsing', (request, reply, payload, done) => {
    if (awaitingContinue.delete(request.raw)) reply.raw.writeContinue();
    done(null, payload);
  });
  const drainMs = Math.min(DRAIN_MAX_MS, http.requestTimeoutMs);
  app.addHook('onSend', (request, reply, payload, done) => {
    // `complete` is Node's: false until the body's last byte was read (app.inject's requests don't have it).
    if (request.raw.complete === false) {
      reply.header('connection', 'close');
      drainBeforeClosing(request.raw, DRAIN_LIMIT_FACTOR * request.routeOptions.bodyLimit, drainMs);
    }
    done(null, payload);
  });
}
