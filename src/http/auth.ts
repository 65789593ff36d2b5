import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { Principal, Scope } from '../modules/orgs/principal.js';
import { API_PREFIX } from './openapi.js';
import type { RateLimiter, RateLimitResult } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Present on every authenticated route: the caller needs ANY of these scopes (none listed = any valid key).
     * `optional`: a request without Authorization is served anonymously; one with a key is authenticated and
     * charged like any other.
     */
    auth?: { anyOf: Scope[]; optional?: boolean };
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export interface AuthOptions {
  authenticate(token: string): Promise<Principal | null>;
  rateLimiter: RateLimiter;
  defaultLimitPerMinute: number;
  /** Called first for every request, whatever its route (Database.requestStarted: caches are checked afresh for it). */
  requestStarted?: () => void;
}

const WINDOW_MS = 60_000;

/** Authenticated requests only; the request itself has passed authentication when this is called. */
export function requirePrincipal(request: FastifyRequest): Principal {
  if (!request.principal) throw new AppError('UNAUTHORIZED', 'Authentication required');
  return request.principal;
}

function unauthorized(message: string): AppError {
  return new AppError('UNAUTHORIZED', message, { headers: { 'www-authenticate': 'Bearer realm="crm"' } });
}

export function setRateLimitHeaders(reply: FastifyReply, r: RateLimitResult): void {
  const resetSeconds = Math.ceil(r.resetMs / 1000);
  reply.headers({
    'ratelimit-policy': `"default";q=${r.limit};w=${WINDOW_MS / 1000}`,
    ratelimit: `"default";r=${r.remaining};t=${resetSeconds}`,
    'x-ratelimit-limit': String(r.limit),
    'x-ratelimit-remaining': String(r.remaining),
    'x-ratelimit-reset': String(Math.ceil((Date.now() + r.resetMs) / 1000)),
  });
}

/**
 * A path under the API's prefix that no route answers: a request that sends a key is authenticated and charged like any other before its
 * 404 (probing for routes is not free, and a bad key is told so); one without a key just gets the 404.
 */
const UNKNOWN_ROUTE_AUTH = { anyOf: [], optional: true };

/**
 * Bearer authentication → rate limit → scope check, before the body is even parsed, for every route that
 * declares `config.auth`. Every authenticated request spends a unit and carries the rate-limit headers,
 * whatever it is answered afterwards (403, 404, 400, 415…): a key must not probe forbidden routes for free.
 * Only a 401 spends nothing (there is no key to charge).
 */
export function registerAuth(app: FastifyInstance, opts: AuthOptions): void {
  app.decorateRequest('principal', null);
  const requestStarted = opts.requestStarted ?? (() => undefined);
  app.addHook('onRequest', async (request, reply) => {
    requestStarted();
    const auth = request.routeOptions.config.auth ?? (request.is404 && request.url.startsWith(`${API_PREFIX}/`) ? UNKNOWN_ROUTE_AUTH : undefined);
    if (!auth) return;
    const header = request.headers.authorization;
    if (header === undefined && auth.optional) return;
    const match = header ? /^Bearer[ ]+(\S+)\s*$/i.exec(header) : null;
    if (!match) throw unauthorized('Send your API key as Authorization: Bearer <key>');
    const principal = await opts.authenticate(match[1]!);
    if (!principal) throw unauthorized('The API key is invalid, revoked or expired');
    request.principal = principal;
    const result = await spendRateLimit(opts.rateLimiter, principal, opts.defaultLimitPerMinute);
    setRateLimitHeaders(reply, result);
    if (!result.allowed) throw rateLimitExceeded(result);
    if (auth.anyOf.length > 0 && !auth.anyOf.some((s) => principal.key.scopes.includes(s))) {
      throw new AppError('INSUFFICIENT_SCOPE', `This operation needs the scope ${auth.anyOf.join(' or ')}`);
    }
  });
}

/**
 * Spends `units` of the key's per-minute budget, all or none (one per request; the stdio MCP server spends
 * one per tool call, the HTTP one the rest of a JSON-RPC batch).
 */
export function spendRateLimit(rateLimiter: RateLimiter, principal: Principal, defaultLimitPerMinute: number, units = 1): Promise<RateLimitResult> {
  return rateLimiter.hit(principal.key.id, principal.key.rateLimitPerMinute ?? defaultLimitPerMinute, WINDOW_MS, units);
}

export function rateLimitExceeded(result: RateLimitResult): AppError {
  return new AppError('RATE_LIMITED', `Rate limit of ${result.limit} requests per minute exceeded`, {
    headers: { 'retry-after': String(Math.max(1, Math.ceil(result.resetMs / 1000))) },
  });
}

/** The organization and actor a service needs to make a change on behalf of the caller. */
export function callerOf(request: FastifyRequest): { organizationId: string; actor: Principal['actor'] } {
  const principal = requirePrincipal(request);
  return { organizationId: principal.organization.id, actor: principal.actor };
}
