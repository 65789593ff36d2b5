import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { clearSessionCookie, csrfMatches, CSRF_FIELD, FORM_COOKIE, SESSION_COOKIE } from './auth/cookies.js';
import { resumeSession } from './auth/sessions.service.js';
import { adminsOnly, csrfRefused } from './errors.js';
import { href } from './html.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The token forms of this request must carry (session token, or the anonymous form cookie on public pages). */
    csrfToken: string | null;
  }
}

/** Only console paths are followed after sign-in, so `next` can't send anyone to another site. */
export function safeNext(value: unknown): string {
  return typeof value === 'string' && /^\/admin(?:[/?#]|$)/.test(value) && !/[\\\s]|\/\//.test(value) ? value : '/admin';
}

function sentToken(request: FastifyRequest): unknown {
  const body = request.body as Record<string, unknown> | undefined;
  return body && typeof body === 'object' ? body[CSRF_FIELD] : undefined;
}

/**
 * Every console request: the session cookie becomes `request.viewer`; then, per route, sign-in is required
 * (unless `public`), every POST must carry the CSRF token, and `admin` routes refuse other users.
 */
export function registerGuard(app: FastifyInstance, ctx: AppContext): void {
  app.decorateRequest('viewer', null);
  app.decorateRequest('csrfToken', null);

  app.addHook('onRequest', async (request, reply) => {
    const token = request.cookies[SESSION_COOKIE];
    if (!token) return;
    request.viewer = await resumeSession(ctx, token);
    if (!request.viewer) clearSessionCookie(request, reply);
  });

  app.addHook('preHandler', async (request, reply) => {
    const access = request.routeOptions.config.console?.access ?? 'member';
    if (access !== 'public' && !request.viewer) {
      const next = request.method === 'GET' ? request.url : undefined;
      const notice = request.cookies[SESSION_COOKIE] ? 'session-ended' : undefined;
      return reply.redirect(href('/admin/sign-in', { next, notice }), 303);
    }
    request.csrfToken = access === 'public' ? (request.cookies[FORM_COOKIE] ?? null) : request.viewer!.session.csrfToken;
    if (request.method === 'POST' && !csrfMatches(sentToken(request), request.csrfToken)) throw csrfRefused();
    if (access === 'admin' && !request.viewer!.user.isAdmin) throw adminsOnly();
  });
}
