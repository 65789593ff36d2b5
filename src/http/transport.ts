import { readFileSync } from 'node:fs';
import type { Server } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';

/** The subset of Fastify's options that shape the listening socket: TLS and the per-connection bounds. */
export interface TransportOptions {
  https?: { cert: Buffer; key: Buffer; headersTimeout: number; connectionsCheckingInterval: number; requireHostHeader: boolean };
  http?: { headersTimeout: number; connectionsCheckingInterval: number; requireHostHeader: boolean };
  connectionTimeout: number;
  keepAliveTimeout: number;
  requestTimeout: number;
  maxRequestsPerSocket: number;
}

/**
 * Node enforces the header and request timeouts on a timer; its 30 s default would let a slow client hold a
 * socket far past the configured limit, so the check runs at a fraction of the shortest one.
 */
function checkingInterval(http: Config['http']): number {
  return Math.min(30_000, Math.max(50, Math.floor(Math.min(http.headersTimeoutMs, http.requestTimeoutMs) / 4)));
}

/** HTTPS when TLS_CERT_FILE and TLS_KEY_FILE are set (files read once, at start), plain HTTP otherwise. */
export function transportOptions(config: Pick<Config, 'tls' | 'http'>): TransportOptions {
  // Node's own Host check answers a bare 400 (no envelope, no X-Request-Id): registerHostCheck does it instead.
  const timers = { headersTimeout: config.http.headersTimeoutMs, connectionsCheckingInterval: checkingInterval(config.http), requireHostHeader: false };
  const common = {
    connectionTimeout: config.http.connectionTimeoutMs,
    keepAliveTimeout: config.http.keepAliveTimeoutMs,
    requestTimeout: config.http.requestTimeoutMs,
    maxRequestsPerSocket: config.http.maxRequestsPerSocket,
  };
  if (!config.tls) return { http: timers, ...common };
  return { https: { cert: readFileSync(config.tls.certFile), key: readFileSync(config.tls.keyFile), ...timers }, ...common };
}

/** What can only be set on the server object itself: the connection cap (extra sockets are closed at accept). */
export function boundServer(server: Server, config: Pick<Config, 'http'>): void {
  server.maxConnections = config.http.maxConnections;
}

/**
 * An HTTP/1.1 request must carry Host (RFC 9112 §3.2): without one it is refused as malformed, in the error
 * envelope with its X-Request-Id, and the connection is closed as Node itself would. HTTP/1.0 may omit it.
 */
export function registerHostCheck(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    if (request.headers.host !== undefined || request.raw.httpVersion !== '1.1') return done();
    reply.header('connection', 'close');
    done(new AppError('MALFORMED_REQUEST', 'An HTTP/1.1 request must carry a Host header'));
  });
}
