import { randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';

/**
 * Logs never carry keys, secrets, e-mails or phones: credentials and contact fields are redacted wherever
 * they appear in a logged object, and query-string values (q may be an e-mail) are never logged.
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  '*.authorization',
  '*.email',
  '*.phoneNumber',
  '*.phone',
  '*.password',
  '*.secret',
  '*.key',
  '*.apiKey',
  'email',
  'phoneNumber',
  'password',
  'secret',
  'key',
];

export function sanitizeUrl(url: string): string {
  const [path, query] = url.split('?', 2);
  if (!query) return path!;
  const params = new URLSearchParams(query);
  return `${path}?${[...params.keys()].map((k) => `${k}=[redacted]`).join('&')}`;
}

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    serializers: {
      // ip is the client's address: the peer, or X-Forwarded-For's client only when TRUST_PROXY is set.
      req: (req: FastifyRequest) => ({ method: req.method, url: sanitizeUrl(req.url), requestId: req.id, ip: req.ip }),
    },
  };
}

/**
 * The application logger (redacting) and the access logger for the one line per request. The access line is
 * built field by field from values that are safe by construction (method, path with query values removed,
 * request id, client address, status, time), so it skips redaction, which cost more than the rest of the line
 * (≈ 9 µs of 13 per request, measured with pino 9). Both write to the same destination, in order.
 */
export function createLoggers(level: string, stream?: NodeJS.WritableStream): { app: Logger; access: Logger } {
  const destination = (stream ?? pino.destination({ dest: 1, sync: true })) as DestinationStream;
  const { redact: _redact, serializers: _serializers, ...plain } = loggerOptions(level);
  return { app: pino(loggerOptions(level), destination), access: pino(plain, destination) };
}

/** The access line of one finished request. */
export function logRequest(access: Logger, request: FastifyRequest, statusCode: number, responseTime: number): void {
  if (!access.isLevelEnabled('info')) return;
  access.info(
    { reqId: request.id, req: { method: request.method, url: sanitizeUrl(request.url), requestId: request.id, ip: request.ip }, res: { statusCode }, responseTime },
    'request completed',
  );
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
/** Unique per process start; a counter after it makes ids unique without random bytes per request. */
const PROCESS_PREFIX = randomBytes(6).toString('hex');
let sequence = 0;

/** Keeps a caller's X-Request-Id when it is safe to echo, so traces join up across services. */
export function requestId(req: { headers: Record<string, string | string[] | undefined> }): string {
  const incoming = req.headers['x-request-id'];
  if (typeof incoming === 'string' && REQUEST_ID.test(incoming)) return incoming;
  sequence = (sequence + 1) % Number.MAX_SAFE_INTEGER;
  return `req_${PROCESS_PREFIX}${sequence.toString(36).padStart(6, '0')}`;
}
