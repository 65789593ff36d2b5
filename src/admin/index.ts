import type { FastifyError, FastifyInstance } from 'fastify';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { AppContext } from '../context.js';
import { AppError } from '../errors.js';
import { registerAssets } from './assets.js';
import { ConsoleError, pageNotFound } from './errors.js';
import { registerGuard } from './guard.js';
import { html } from './html.js';
import type { AdminDeps, AdminModule } from './module.js';
import { ADMIN_MODULES } from './modules.js';
import { createShell, SECURITY_HEADERS, sendHtml } from './shell.js';

export const ADMIN_PREFIX = '/admin';

/** Reads the organization's own navigation entries (custom objects) after the guard let the request in. */
function registerOrgNav(admin: FastifyInstance, deps: AdminDeps, modules: readonly AdminModule[]): void {
  const sources = modules.filter((m) => m.navFor !== undefined);
  admin.decorateRequest('orgNav', null);
  admin.addHook('preHandler', async (request) => {
    if (!request.viewer || sources.length === 0) return;
    const viewer = request.viewer;
    request.orgNav = (await Promise.all(sources.map((m) => m.navFor!(deps, viewer)))).flat();
  });
}

/**
 * The admin console under /admin: server-rendered pages calling the same services as the API. Encapsulated,
 * so its form parser, cookies, HTML error pages and session guard never touch the JSON API.
 */
export async function registerAdmin(app: FastifyInstance, ctx: AppContext, modules: readonly AdminModule[] = ADMIN_MODULES): Promise<void> {
  await app.register(
    async (admin) => {
      // Console routes are HTML pages, not API operations: kept out of the OpenAPI document.
      admin.addHook('onRoute', (route) => {
        route.schema = { ...route.schema, hide: true };
      });
      await admin.register(cookie);
      await admin.register(formbody);
      // Server time of every console response (Server-Timing), visible in the browser's network panel and in tests.
      const started = new WeakMap<object, number>();
      admin.addHook('onRequest', async (request, reply) => {
        started.set(request, performance.now());
        reply.headers(SECURITY_HEADERS);
      });
      admin.addHook('onSend', async (request, reply) => {
        reply.header('server-timing', `app;dur=${(performance.now() - (started.get(request) ?? performance.now())).toFixed(1)}`);
      });
      registerGuard(admin, ctx);
      const staticNav = modules.flatMap((m) => m.nav);
      const shell = createShell(staticNav, registerAssets(admin));
      const objectPages = new Map(modules.flatMap((m) => Object.entries(m.objectPages ?? {})));
      const deps: AdminDeps = {
        ctx,
        objectHref(object, id, objectSlug) {
          const page = objectPages.get(object);
          return typeof page === 'function' ? page(id, objectSlug) : page === undefined ? undefined : `${page}/${id}`;
        },
        navOf: (request) => (request.orgNav ? [...staticNav, ...request.orgNav] : staticNav),
        render(request, reply, page) {
          const markup = request.viewer ? shell.page(request, request.viewer, page) : shell.bare(page);
          return sendHtml(reply, markup, page.status);
        },
      };
      registerOrgNav(admin, deps, modules);
      for (const module of modules) module.register(admin, deps);

      admin.setNotFoundHandler((request, reply) => {
        const e = pageNotFound();
        return deps.render(request, reply, { title: e.title, status: e.status, body: html`<p>${e.message}</p><p><a href="/admin">Go to the dashboard</a></p>` });
      });
      admin.setErrorHandler((error: FastifyError | AppError | ConsoleError, request, reply) => {
        const known = error instanceof ConsoleError ? error : error instanceof AppError && error.code === 'NOT_FOUND' ? pageNotFound() : undefined;
        if (known) {
          return deps.render(request, reply, { title: known.title, status: known.status, body: html`<p>${known.message}</p><p><a href="/admin">Go to the dashboard</a></p>` });
        }
        const status = error instanceof AppError ? error.status : (error as FastifyError).statusCode ?? 500;
        if (status >= 500) request.log.error({ err: error }, 'console request failed');
        const clientError = status >= 400 && status < 500;
        return deps.render(request, reply, {
          title: clientError ? 'Request not accepted' : 'Something went wrong',
          status: clientError ? status : 500,
          body: html`<p>${clientError ? 'The request could not be processed. Go back and try again.' : 'The page could not be shown because of an unexpected error.'}</p>
<p class="muted">Reference: <code>${request.id}</code></p>`,
        });
      });
    },
    { prefix: ADMIN_PREFIX },
  );
}
