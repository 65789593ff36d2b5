import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics } from 'prom-client';
import { safeEqual } from '../crypto/secrets.js';
import type { Metrics } from './metrics.js';

/**
 * GET /metrics for a process without an API server (`crm worker`, on METRICS_PORT): the same registry and
 * the same Bearer METRICS_TOKEN rule as the API's route. Anything else is a 404.
 */
export async function startMetricsServer(metrics: Metrics, opts: { host: string; port: number; token: string }): Promise<{ port: number; close(): Promise<void> }> {
  collectDefaultMetrics({ register: metrics.registry });
  const server = createServer((req, res) => {
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (req.method !== 'GET' || req.url !== '/metrics') return void res.writeHead(404).end();
    if (!match || !safeEqual(match[1]!, opts.token)) return void res.writeHead(401, { 'www-authenticate': 'Bearer realm="metrics"' }).end();
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store' }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  server.listen(opts.port, opts.host);
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
