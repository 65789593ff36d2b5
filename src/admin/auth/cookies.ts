import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { safeEqual } from '../../crypto/secrets.js';

export const SESSION_COOKIE = 'crm_session';
/** Before sign-in there is no session to hold a CSRF token: the sign-in and setup forms double-submit this cookie. */
export const FORM_COOKIE = 'crm_form';
export const CSRF_FIELD = '_csrf';

/** httpOnly, SameSite=Lax, scoped to the console, Secure whenever the request came over https. */
function options(request: FastifyRequest) {
  return { path: '/admin', httpOnly: true, sameSite: 'lax' as const, secure: request.protocol === 'https' };
}

/** A browser-session cookie: the server-side expiry (sessions.service.ts) is what ends a session. */
export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, token: string): void {
  reply.setCookie(SESSION_COOKIE, token, options(request));
  reply.clearCookie(FORM_COOKIE, options(request));
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, options(request));
}

/** The anonymous form token of this browser, set on first use. */
export function formToken(request: FastifyRequest, reply: FastifyReply): string {
  const current = request.cookies[FORM_COOKIE];
  if (current && /^[A-Za-z0-9_-]{43}$/.test(current)) return current;
  const token = randomBytes(32).toString('base64url');
  reply.setCookie(FORM_COOKIE, token, { ...options(request), sameSite: 'strict' });
  request.cookies[FORM_COOKIE] = token;
  return token;
}

/**
 * Synchronizer-token check for every console POST: signed-in routes compare with the token stored in the
 * session row, the sign-in and setup forms with the anonymous form cookie.
 */
export function csrfMatches(sent: unknown, expected: string | null | undefined): boolean {
  return typeof sent === 'string' && typeof expected === 'string' && expected.length > 0 && safeEqual(sent, expected);
}
