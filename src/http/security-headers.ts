import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Pages a browser renders (the console, the API reference): never framed, against clickjacking. */
const UNFRAMEABLE = ['/admin', '/docs'];
/** Answers that carry account data or live state: never stored by a browser or an intermediary cache. */
const UNCACHEABLE = ['/api', '/health', '/ready', '/metrics', '/openapi.json'];
const ONE_YEAR = 31_536_000;

/** `url` is `prefix` itself or below it (a path segment or the query follows), not merely starting with its letters. */
const under = (url: string, prefixes: readonly string[]) =>
  prefixes.some((p) => url.startsWith(p) && (url.length === p.length || url[p.length] === '/' || url[p.length] === '?'));

/**
 * Security headers on every response, errors included (set before anything can fail), with the request id
 * (X-Request-Id). HSTS only when the
 * request arrived over HTTPS, directly or through a trusted proxy (TRUST_PROXY + X-Forwarded-Proto): a
 * plain-HTTP development server must not pin browsers to HTTPS. The /docs page's own CSP keeps
 * `frame-ancestors 'none'` (see http/openapi.ts).
 */
export function registerSecurityHeaders(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    applySecurityHeaders(request, reply);
    done();
  });
}

/** Also called directly where Fastify answers without running hooks (malformed URLs). */
export function applySecurityHeaders(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'no-referrer');
  if (request.protocol === 'https') reply.header('strict-transport-security', `max-age=${ONE_YEAR}; includeSubDomains`);
  const url = request.url;
  if (under(url, UNCACHEABLE)) reply.header('cache-control', 'no-store');
  if (under(url, UNFRAMEABLE)) {
    reply.header('x-frame-options', 'DENY');
    reply.header('content-security-policy', "frame-ancestors 'none'");
  }
}

/**
 * The /docs page's CSP, from the one @fastify/swagger-ui sends: framing becomes 'none', and styles may be inline,
 * because Swagger UI's React code sets style attributes, which the browser otherwise refuses with a console error
 * on every page view. Scripts stay 'self' only: an inline style can't run code.
 */
export function docsPageCsp(csp: string): string {
  const directives = csp
    .split(';')
    .map((d) => d.trim())
    .filter((d) => d && !/^frame-ancestors\b/i.test(d))
    .map((d) => (/^style-src\b/i.test(d) && !d.includes("'unsafe-inline'") ? `${d} 'unsafe-inline'` : d));
  return [...directives, "frame-ancestors 'none'"].join('; ');
}
