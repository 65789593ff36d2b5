import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/** Every environment variable the service reads, in one schema (defaults applied, strings coerced). */
export const EnvSchema = Type.Object({
  NODE_ENV: Type.String({ default: 'development' }),
  PORT: Type.Integer({ default: 3000, minimum: 0, maximum: 65535 }),
  HOST: Type.String({ default: '127.0.0.1' }),
  DATABASE_URL: Type.String({ default: 'data/crm.db' }),
  DATABASE_TRANSACTION_POOLER: Type.Boolean({ default: false }),
  ENCRYPTION_KEY: Type.Optional(Type.String()),
  ENCRYPTION_KEYS_RETIRED: Type.String({ default: '' }),
  DECRYPTION_CACHE_SIZE: Type.Integer({ default: 10_000, minimum: 0 }),
  REDIS_URL: Type.Optional(Type.String()),
  RATE_LIMIT_PER_MINUTE: Type.Integer({ default: 120, minimum: 1 }),
  MAX_OBJECTS_PER_ORG: Type.Integer({ default: 100, minimum: 1 }),
  MAX_WEBHOOKS_PER_ORG: Type.Integer({ default: 50, minimum: 1 }),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: Type.Boolean({ default: false }),
  WEBHOOK_TIMEOUT_MS: Type.Integer({ default: 10_000, minimum: 1 }),
  EVENT_RETENTION_DAYS: Type.Integer({ default: 30, minimum: 1 }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  BODY_LIMIT_BYTES: Type.Integer({ default: 1_048_576, minimum: 1024 }),
  TRUST_PROXY: Type.Boolean({ default: false }),
  DISPATCHER: Type.Union([Type.Literal('inline'), Type.Literal('off')], { default: 'inline' }),
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  METRICS_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  TLS_CERT_FILE: Type.Optional(Type.String()),
  TLS_KEY_FILE: Type.Optional(Type.String()),
  HTTP_CONNECTION_TIMEOUT_MS: Type.Integer({ default: 30_000, minimum: 1 }),
  HTTP_HEADERS_TIMEOUT_MS: Type.Integer({ default: 15_000, minimum: 1 }),
  HTTP_REQUEST_TIMEOUT_MS: Type.Integer({ default: 60_000, minimum: 1 }),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: Type.Integer({ default: 72_000, minimum: 1 }),
  HTTP_MAX_CONNECTIONS: Type.Integer({ default: 10_000, minimum: 1 }),
  HTTP_MAX_REQUESTS_PER_SOCKET: Type.Integer({ default: 0, minimum: 0 }),
  HTTP_THREADS: Type.Optional(Type.Integer({ minimum: 1, maximum: 64 })),
  SHUTDOWN_DELAY_MS: Type.Integer({ default: 0, minimum: 0, maximum: 300_000 }),
  TRASH_RETENTION_DAYS: Type.Integer({ default: 30, minimum: 1 }),
});
type Env = Static<typeof EnvSchema>;

export type Dialect = 'sqlite' | 'postgres';

export interface Config {
  readonly env: string;
  readonly port: number;
  readonly host: string;
  /** transactionPooler: PostgreSQL reached through PgBouncer in transaction mode (see OpenOptions in db/database.ts). */
  readonly database: { readonly dialect: Dialect; readonly url: string; readonly transactionPooler?: boolean };
  /** Base64 32-byte keys; the first encrypts, all decrypt (rotation). */
  readonly encryptionKeys: readonly string[];
  /** Short plaintexts (contact values) kept in memory by ciphertext, so repeated reads skip decryption; 0 = none. */
  readonly decryptionCacheSize: number;
  readonly redisUrl: string | undefined;
  readonly rateLimitPerMinute: number;
  /** Custom objects one organization may define (POST /objects beyond it: 409 LIMIT_EXCEEDED). */
  readonly maxObjectsPerOrganization: number;
  /** Webhook endpoints one organization may register (POST /webhooks beyond it: 409 LIMIT_EXCEEDED): every event fans out to each. */
  readonly maxWebhooksPerOrganization: number;
  readonly webhooks: { readonly allowPrivateNetworks: boolean; readonly timeoutMs: number };
  /** Events stay readable in the change feed (GET /events) at least this long. */
  readonly eventRetentionDays: number;
  readonly logLevel: string;
  readonly bodyLimitBytes: number;
  readonly trustProxy: boolean;
  /** 'inline' runs the webhook dispatcher and scheduler inside `crm serve`; 'off' leaves them to `crm worker`. */
  readonly dispatcher: 'inline' | 'off';
  /** GET /metrics is served only when set, to callers sending it as a Bearer token. */
  readonly metricsToken: string | undefined;
  /** `crm worker` only (it has no API port): where it serves GET /metrics, with the same token. */
  readonly metricsPort: number | undefined;
  /** Threads serving HTTP in one server process (one listening socket, one rate-limit budget); 1 = none besides the main thread. */
  readonly httpThreads: number;
  /**
   * On SIGTERM/SIGINT, how long `/ready` answers 503 while everything else is still served, before the server
   * stops accepting: a load balancer's readiness checks take the instance out first (docs/scaling.md).
   */
  readonly shutdownDelayMs: number;
  /** HTTPS served directly when both files are given. */
  readonly tls: { readonly certFile: string; readonly keyFile: string } | null;
  readonly http: HttpLimits;
  /** Trashed leads, accounts, deals and records can be restored this long; the scheduler then purges them. */
  readonly trashRetentionDays: number;
}

/** Bounds on what one connection may hold (slow clients, idle keep-alives, connection floods). */
export interface HttpLimits {
  /** A socket with no traffic for this long is closed. */
  readonly connectionTimeoutMs: number;
  /** The request line and headers must arrive within this time (slow-header clients). */
  readonly headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this time (slow-body clients). */
  readonly requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this time (above a load balancer's own idle timeout). */
  readonly keepAliveTimeoutMs: number;
  /** Connections beyond this are refused at accept. */
  readonly maxConnections: number;
  /** 0 = unlimited; otherwise the server closes a keep-alive connection after this many requests. */
  readonly maxRequestsPerSocket: number;
}

export class ConfigError extends Error {}

/** Without HTTP_THREADS, one HTTP thread per core up to this: SQLite has one writer, and each thread holds its own connections and compiled app. */
const DEFAULT_MAX_HTTP_THREADS = 4;

/**
 * Without HTTP_THREADS on PostgreSQL, one: the database's work is done by other processes, so one thread is
 * not held up by it, and a second thread cost 4-5 times the API CPU per request in our measurements (docs/
 * performance.md). More capacity comes from more instances (docs/scaling.md).
 */
const defaultHttpThreads = (dialect: Dialect) => (dialect === 'postgres' ? 1 : Math.min(availableParallelism(), DEFAULT_MAX_HTTP_THREADS));

const dialectOf = (url: string): Dialect => (/^postgres(ql)?:\/\//.test(url) ? 'postgres' : 'sqlite');

function parseEnv(env: Record<string, string | undefined>): Env {
  const raw = Object.fromEntries(
    Object.keys(EnvSchema.properties).flatMap((k) => (env[k] === undefined || env[k] === '' ? [] : [[k, env[k]]])),
  );
  const value = Value.Default(EnvSchema, Value.Convert(EnvSchema, raw));
  const errors = [...Value.Errors(EnvSchema, value)];
  if (errors.length > 0) {
    const detail = errors.map((e) => `${e.path.slice(1)}: ${e.message}`).join('; ');
    throw new ConfigError(`Invalid configuration: ${detail}`);
  }
  return value as Env;
}

function isValidKey(key: string): boolean {
  return Buffer.from(key, 'base64').length === 32;
}

/**
 * Outside production a missing ENCRYPTION_KEY is generated once into the data folder, so that
 * `npm start` works on a fresh clone; production refuses to start without one.
 */
function resolveEncryptionKey(env: Env, sqliteFile: string | null, warn: (msg: string) => void): string {
  if (env.ENCRYPTION_KEY) return env.ENCRYPTION_KEY;
  if (env.NODE_ENV === 'production') throw new ConfigError('ENCRYPTION_KEY is required in production');
  const keyFile = join(sqliteFile ? dirname(sqliteFile) : 'data', 'encryption.key');
  if (existsSync(keyFile)) return readFileSync(keyFile, 'utf8').trim();
  mkdirSync(dirname(keyFile), { recursive: true });
  const key = randomBytes(32).toString('base64');
  writeFileSync(keyFile, `${key}\n`, { mode: 0o600 });
  warn(`ENCRYPTION_KEY is not set: generated one into ${keyFile}. Back it up; set ENCRYPTION_KEY in production.`);
  return key;
}

export function loadConfig(
  env: Record<string, string | undefined>,
  warn: (msg: string) => void = (m) => process.emitWarning(m),
): Config {
  const e = parseEnv(env);
  const dialect = dialectOf(e.DATABASE_URL);
  const current = resolveEncryptionKey(e, dialect === 'sqlite' ? e.DATABASE_URL : null, warn);
  const retired = e.ENCRYPTION_KEYS_RETIRED.split(',').map((k) => k.trim()).filter(Boolean);
  for (const key of [current, ...retired]) {
    if (!isValidKey(key)) throw new ConfigError('ENCRYPTION_KEY and ENCRYPTION_KEYS_RETIRED must be base64 of 32 bytes');
  }
  if (Boolean(e.TLS_CERT_FILE) !== Boolean(e.TLS_KEY_FILE)) throw new ConfigError('TLS_CERT_FILE and TLS_KEY_FILE must be set together');
  if (e.METRICS_PORT !== undefined && !e.METRICS_TOKEN) throw new ConfigError('METRICS_PORT needs METRICS_TOKEN');
  if (e.HTTP_HEADERS_TIMEOUT_MS > e.HTTP_REQUEST_TIMEOUT_MS) throw new ConfigError('HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS');
  return Object.freeze({
    env: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    database: Object.freeze({ dialect, url: e.DATABASE_URL, transactionPooler: e.DATABASE_TRANSACTION_POOLER }),
    encryptionKeys: Object.freeze([current, ...retired]),
    decryptionCacheSize: e.DECRYPTION_CACHE_SIZE,
    redisUrl: e.REDIS_URL,
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
    maxObjectsPerOrganization: e.MAX_OBJECTS_PER_ORG,
    maxWebhooksPerOrganization: e.MAX_WEBHOOKS_PER_ORG,
    webhooks: Object.freeze({ allowPrivateNetworks: e.WEBHOOK_ALLOW_PRIVATE_NETWORKS, timeoutMs: e.WEBHOOK_TIMEOUT_MS }),
    eventRetentionDays: e.EVENT_RETENTION_DAYS,
    logLevel: e.LOG_LEVEL,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    trustProxy: e.TRUST_PROXY,
    dispatcher: e.DISPATCHER,
    metricsToken: e.METRICS_TOKEN,
    metricsPort: e.METRICS_PORT,
    httpThreads: e.HTTP_THREADS ?? defaultHttpThreads(dialect),
    shutdownDelayMs: e.SHUTDOWN_DELAY_MS,
    tls: e.TLS_CERT_FILE && e.TLS_KEY_FILE ? Object.freeze({ certFile: e.TLS_CERT_FILE, keyFile: e.TLS_KEY_FILE }) : null,
    http: Object.freeze({
      connectionTimeoutMs: e.HTTP_CONNECTION_TIMEOUT_MS,
      headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: e.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      maxConnections: e.HTTP_MAX_CONNECTIONS,
      maxRequestsPerSocket: e.HTTP_MAX_REQUESTS_PER_SOCKET,
    }),
    trashRetentionDays: e.TRASH_RETENTION_DAYS,
  });
}

/** The database location alone, for commands that must not resolve (or generate) encryption keys: backup, restore. */
export function loadDatabaseConfig(env: Record<string, string | undefined>): Config['database'] {
  const url = parseEnv(env).DATABASE_URL;
  return Object.freeze({ dialect: dialectOf(url), url });
}
