import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';

/**
 * The console's stylesheet and script are plain files in src/admin/assets, served by the app itself (no
 * build step, no CDN). `npm run build` compiles TypeScript only, so from dist/ the files are found in the
 * source tree next to it.
 */
function assetDir(): string {
  const candidates = [new URL('./assets/', import.meta.url), new URL('../../../src/admin/assets/', import.meta.url)];
  const found = candidates.find((u) => existsSync(new URL('admin.css', u)));
  if (!found) throw new Error('console assets (src/admin/assets) not found');
  return fileURLToPath(found);
}

interface Asset {
  body: Buffer;
  type: string;
  version: string;
}

function load(dir: string, file: string, type: string): Asset {
  const body = readFileSync(dir + file);
  return { body, type, version: createHash('sha256').update(body).digest('hex').slice(0, 12) };
}

export interface AssetUrls {
  css: string;
  js: string;
}

/** Serves the two assets with long caching; their URLs carry a content hash, so a change is fetched at once. */
export function registerAssets(app: FastifyInstance): AssetUrls {
  const dir = assetDir();
  const assets: Record<string, Asset> = {
    'admin.css': load(dir, 'admin.css', 'text/css; charset=utf-8'),
    'admin.js': load(dir, 'admin.js', 'text/javascript; charset=utf-8'),
  };
  app.get<{ Params: { file: string } }>('/assets/:file', { config: { console: { access: 'public' } } }, async (request, reply) => {
    const asset = assets[request.params.file];
    if (!asset) return reply.callNotFound();
    return reply.header('cache-control', 'public, max-age=31536000, immutable').type(asset.type).send(asset.body);
  });
  return {
    css: `/admin/assets/admin.css?v=${assets['admin.css']!.version}`,
    js: `/admin/assets/admin.js?v=${assets['admin.js']!.version}`,
  };
}
