import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics } from 'prom-client';
import type { AppContext } from '../context.js';
import { safeEqual } from '../crypto/secrets.js';
import { AppError } from '../errors.js';

/**
 * GET /metrics (Prometheus text format), only when METRICS_TOKEN is set and only for callers sending it as
 * a Bearer token: request rates and latencies reveal traffic, so they are not public. Without the token
 * neither the route nor the per-request hook exists, so an unmonitored server pays nothing for metrics.
 */
export function registerMetrics(
  app: FastifyInstance,
  ctx: Pick<AppContext, 'config' | 'metrics'>,
  /** The exposition served (a multi-thread server's sums all threads); this registry's own by default. */
  exposition: () => Promise<string> = () => ctx.metrics.registry.metrics(),
): void {
  const token = ctx.config.metricsToken;
  if (!token) return;
  const { registry, httpRequests, httpDuration } = ctx.metrics;
  if (ctx.metrics.processWide) collectDefaultMetrics({ register: registry });

  app.addHook('onResponse', async (request, reply) => {
    // The route pattern, not the URL: ids and query strings would make every request its own series.
    const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) };
    httpRequests.inc(labels);
    httpDuration.observe(labels, reply.elapsedTime / 1000);
  });

  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    if (!match || !safeEqual(match[1]!, token)) {
      throw new AppError('UNAUTHORIZED', 'Send METRICS_TOKEN as Authorization: Bearer <token>', {
        headers: { 'www-authenticate': 'Bearer realm="metrics"' },
      });
    }
    reply.type(registry.contentType);
    return exposition();
  });
}
