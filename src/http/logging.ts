import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { FastifyChildLoggerFactory } from 'fastify/types/logger.js';
import { randomBytesPooled } from '../lib/random.js';
import { BatchedOutput } from './batched-output.js';
import pino, { type Bindings, type ChildLoggerOptions, type DestinationStream, type LogFn, type Logger, type LoggerOptions } from 'pino';

/**
 * Logs never carry keys, secrets, e-mails or phones: credentials and contact fields are redacted wherever
 * they appear in a logged object, query-string values (q may be an e-mail) are never logged, and neither are
 * path segments that are not ids or slugs (GET /leads/<an e-mail>).
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

const MAX_SEGMENT = 64;
const EXTENSIONS = new Set(['json', 'js', 'css', 'map', 'png', 'svg', 'ico', 'html', 'txt']);
const isHex = (c: number) => (c >= 48 && c <= 57) || (c >= 97 && c <= 102);

/**
 * Whether path[start, end) is safe to log as it is: an id (24 lower-case hex digits), or slug-shaped — a
 * static segment, an object slug or a stage key: a lower-case letter, then lower-case letters, `_` and `-`
 * with at most four digits, optionally a file name's extension (openapi.json, admin.css). Anything else —
 * an e-mail, a phone number, an API key, a percent-encoded value, a digit-heavy or mixed-case token — is
 * not: only what is known safe is kept. A character loop rather than a regular expression: this runs on
 * every request's access line, and the loop costs a fraction of the match.
 */
function safeSegment(path: string, start: number, end: number): boolean {
  const length = end - start;
  if (length === 0) return true;
  if (length > MAX_SEGMENT) return false;
  if (length === 24) {
    let i = start;
    while (i < end && isHex(path.charCodeAt(i))) i++;
    if (i === end) return true;
  }
  const first = path.charCodeAt(start);
  if (first < 97 || first > 122) return false;
  let digits = 0;
  for (let i = start + 1; i < end; i++) {
    const c = path.charCodeAt(i);
    if ((c >= 97 && c <= 122) || c === 95 || c === 45) continue;
    if (c >= 48 && c <= 57 && ++digits <= 4) continue;
    return c === 46 && EXTENSIONS.has(path.slice(i + 1, end));
  }
  return true;
}

function everySegmentSafe(path: string): boolean {
  for (let start = 0; start < path.length; ) {
    const slash = path.indexOf('/', start);
    const end = slash === -1 ? path.length : slash;
    if (!safeSegment(path, start, end)) return false;
    start = end + 1;
  }
  return true;
}

/** The path with every segment that is not known safe (safeSegment) replaced by [redacted]: logs, error messages. */
export function redactPath(path: string): string {
  if (everySegmentSafe(path)) return path;
  return path
    .split('/')
    .map((segment) => (safeSegment(segment, 0, segment.length) ? segment : '[redacted]'))
    .join('/');
}

/** The URL as logged: unsafe path segments redacted (redactPath), query values never kept (q may be an e-mail). */
export function sanitizeUrl(url: string): string {
  const mark = url.indexOf('?');
  if (mark === -1) return redactPath(url);
  const query = url.slice(mark + 1);
  const safePath = redactPath(url.slice(0, mark));
  if (!query) return safePath;
  const params = new URLSearchParams(query);
  return `${safePath}?${[...params.keys()].map((k) => `${k}=[redacted]`).join('&')}`;
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

/** Writes the access line of one finished request. */
export type AccessLog = (request: FastifyRequest, statusCode: number, responseTime: number) => void;

/**
 * The application logger (redacting) and the access log, one line per request, both writing to the same
 * destination in order. The access line holds only values that are safe by construction (method, path with
 * unsafe segments and query values removed, request id, client address, status, time), so it needs no redaction, and it is
 * formatted here in pino's own line format rather than through pino: redaction cost ~9 µs of 13 per request,
 * and pino's general-purpose formatting of the rest ~4 µs of a ~60 µs GET (docs/performance.md).
 */
export function createLoggers(level: string, stream?: NodeJS.WritableStream): { app: Logger; access: AccessLog; close(): void } {
  const output = stream ? undefined : new BatchedOutput(1);
  const destination = (stream ?? output) as DestinationStream;
  const app = pino(loggerOptions(level), destination);
  const close = () => output?.close();
  if (!app.isLevelEnabled('info')) return { app, access: () => undefined, close };
  const head = `{"level":${app.levels.values.info},"time":`;
  const base = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())},"reqId":`;
  const access: AccessLog = (request, statusCode, responseTime) => {
    const id = JSON.stringify(request.id);
    destination.write(
      `${head}${Date.now()}${base}${id},"req":{"method":${JSON.stringify(request.method)},"url":${JSON.stringify(sanitizeUrl(request.url))},` +
        `"requestId":${id},"ip":${JSON.stringify(request.ip ?? null)}},"res":{"statusCode":${statusCode}},"responseTime":${responseTime},"msg":"request completed"}\n`,
    );
  };
  return { app, access, close };
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
/**
 * Drawn once per process (or HTTP thread), so a log search can tell which one answered. The rest is random, not
 * a counter: a client comparing the ids of two of its requests learns nothing of how many others were served.
 */
const PROCESS_PREFIX = randomBytes(6).toString('hex');

/** Keeps a caller's X-Request-Id when it is safe to echo, so traces join up across services. */
export function requestId(req: { headers: Record<string, string | string[] | undefined> }): string {
  const incoming = req.headers['x-request-id'];
  if (typeof incoming === 'string' && REQUEST_ID.test(incoming)) return incoming;
  return `req_${PROCESS_PREFIX}${randomBytesPooled(8).toString('hex')}`;
}

type LogMethod = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/**
 * `request.log`, made on first use. Fastify gives every request a child logger, and pino's child() redacts its
 * bindings: ~4 µs on every request (a CPU profile of GET /leads/{id}), for a logger that only error paths use.
 */
class LazyRequestLogger implements FastifyBaseLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly opts: ChildLoggerOptions,
  ) {}

  private get logger(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.opts));
  }

  get level(): string {
    return this.made?.level ?? this.opts.level ?? this.parent.level;
  }

  set level(level: string) {
    this.logger.level = level;
  }

  fatal: LogFn = (...args: Parameters<LogFn>) => this.call('fatal', args);
  error: LogFn = (...args: Parameters<LogFn>) => this.call('error', args);
  warn: LogFn = (...args: Parameters<LogFn>) => this.call('warn', args);
  info: LogFn = (...args: Parameters<LogFn>) => this.call('info', args);
  debug: LogFn = (...args: Parameters<LogFn>) => this.call('debug', args);
  trace: LogFn = (...args: Parameters<LogFn>) => this.call('trace', args);
  silent: LogFn = () => undefined;

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }

  private call(method: LogMethod, args: Parameters<LogFn>): void {
    (this.logger[method] as (...a: unknown[]) => void)(...args);
  }
}

export const lazyChildLogger: FastifyChildLoggerFactory = (logger, bindings, opts) => new LazyRequestLogger(logger, bindings, opts);

/** Writes what the app's logger holds (BatchedOutput) now, for a thread that stops without closing its app. */
export function flushLog(log: FastifyBaseLogger): void {
  (log as unknown as { flush?: () => void }).flush?.();
}
