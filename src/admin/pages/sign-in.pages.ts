import type { FastifyReply, FastifyRequest } from 'fastify';
import { clearSessionCookie, formToken, setSessionCookie } from '../auth/cookies.js';
import { completeSetup, checkSetupToken } from '../auth/setup.service.js';
import { endSession, startSession } from '../auth/sessions.service.js';
import { signIn } from '../auth/sign-in.service.js';
import { button, csrfField, errorSummary, textField } from '../components.js';
import { duration } from '../format.js';
import { formBody, problemOf, queryText, text, type FormProblem } from '../forms.js';
import { safeNext } from '../guard.js';
import { html } from '../html.js';
import { viewerOf, type AdminDeps, type AdminModule } from '../module.js';

const PUBLIC = { console: { access: 'public' as const } };

const NOTICES: Record<string, string> = {
  'signed-out': 'You are signed out.',
  'session-ended': 'Your session has ended. Sign in again to continue.',
};

function signInPage(deps: AdminDeps, request: FastifyRequest, reply: FastifyReply, opts: { email?: string; problem?: FormProblem; status?: number; next: string }) {
  const token = formToken(request, reply);
  request.csrfToken = token;
  return deps.render(request, reply, {
    title: 'Sign in',
    status: opts.status,
    notice: NOTICES[queryText(request, 'notice')],
    body: html`${errorSummary(opts.problem, {})}
<form method="post" action="/admin/sign-in" class="form" novalidate>
  ${csrfField(request)}
  <input type="hidden" name="next" value="${opts.next}">
  ${textField({ name: 'email', label: 'E-mail', type: 'email', value: opts.email, required: true, autocomplete: 'username' })}
  ${textField({ name: 'password', label: 'Password', type: 'password', required: true, autocomplete: 'current-password' })}
  ${button('Sign in')}
</form>
<p class="hint">First administrator of an organization? An operator creates a one-time setup link with <code>crm admin setup-link --org &lt;id&gt;</code>.</p>`,
  });
}

const SETUP_LABELS = { name: 'Your name', email: 'E-mail', password: 'Password', confirmPassword: 'Confirm password' };

function setupPage(deps: AdminDeps, request: FastifyRequest, reply: FastifyReply, opts: { token: string; organization: string; values?: Record<string, string>; problem?: FormProblem; status?: number }) {
  request.csrfToken = formToken(request, reply);
  const v = opts.values ?? {};
  const f = opts.problem?.fields ?? {};
  return deps.render(request, reply, {
    title: 'Set up the console',
    status: opts.status,
    body: html`<p>Create the first administrator of <strong>${opts.organization}</strong>. This link works once.</p>
${errorSummary(opts.problem, SETUP_LABELS)}
<form method="post" action="/admin/setup" class="form" novalidate>
  ${csrfField(request)}
  <input type="hidden" name="token" value="${opts.token}">
  ${textField({ name: 'name', label: SETUP_LABELS.name, value: v.name, error: f.name, required: true, autocomplete: 'name' })}
  ${textField({ name: 'email', label: SETUP_LABELS.email, type: 'email', value: v.email, error: f.email, required: true, autocomplete: 'username' })}
  ${textField({ name: 'password', label: SETUP_LABELS.password, type: 'password', error: f.password, required: true, autocomplete: 'new-password', hint: 'At least 10 characters.' })}
  ${textField({ name: 'confirmPassword', label: SETUP_LABELS.confirmPassword, type: 'password', error: f.confirmPassword, required: true, autocomplete: 'new-password' })}
  ${button('Create administrator')}
</form>`,
  });
}

function invalidSetupLink(deps: AdminDeps, request: FastifyRequest, reply: FastifyReply) {
  return deps.render(request, reply, {
    title: 'Setup link not valid',
    status: 404,
    body: html`<p>This setup link is unknown, already used or expired, or the organization already has an administrator.</p>
<p>Ask an operator for a new link (<code>crm admin setup-link --org &lt;id&gt;</code>), or <a href="/admin/sign-in">sign in</a>.</p>`,
  });
}

/** Sign-in, sign-out and first-run setup. */
export const signInModule: AdminModule = {
  name: 'sign-in',
  nav: [],
  register(app, deps) {
    const { ctx } = deps;

    app.get('/sign-in', { config: PUBLIC }, async (request, reply) => {
      if (request.viewer) return reply.redirect('/admin', 303);
      return signInPage(deps, request, reply, { next: safeNext(queryText(request, 'next')) });
    });

    app.post('/sign-in', { config: PUBLIC }, async (request, reply) => {
      const body = formBody(request);
      const email = text(body, 'email');
      const next = safeNext(text(body, 'next'));
      const result = await signIn(ctx, { email, password: text(body, 'password'), ip: request.ip, userAgent: request.headers['user-agent'] ?? '' });
      if (result.ok) {
        setSessionCookie(request, reply, result.token);
        return reply.redirect(next, 303);
      }
      const lock = result.retryInMs > 0 ? `Too many failed attempts: try again in ${duration(result.retryInMs)}.` : '';
      const message = result.reason === 'locked' ? lock : `The e-mail or password is incorrect. ${lock}`.trim();
      return signInPage(deps, request, reply, { email, next, problem: { fields: {}, message }, status: result.reason === 'locked' ? 429 : 401 });
    });

    app.post('/sign-out', async (request, reply) => {
      await endSession(ctx, viewerOf(request));
      clearSessionCookie(request, reply);
      return reply.redirect('/admin/sign-in?notice=signed-out', 303);
    });

    app.get('/setup', { config: PUBLIC }, async (request, reply) => {
      const token = queryText(request, 'token');
      const target = token ? await checkSetupToken(ctx, token) : null;
      if (!target) return invalidSetupLink(deps, request, reply);
      return setupPage(deps, request, reply, { token, organization: target.organizationName });
    });

    app.post('/setup', { config: PUBLIC }, async (request, reply) => {
      const body = formBody(request);
      const token = text(body, 'token');
      const target = token ? await checkSetupToken(ctx, token) : null;
      if (!target) return invalidSetupLink(deps, request, reply);
      const values = { name: text(body, 'name'), email: text(body, 'email'), password: text(body, 'password'), confirmPassword: text(body, 'confirmPassword') };
      try {
        const created = await completeSetup(ctx, token, values);
        const { token: session } = await startSession(ctx, { ...created, ip: request.ip, userAgent: request.headers['user-agent'] ?? '' });
        setSessionCookie(request, reply, session);
        return reply.redirect('/admin?notice=welcome', 303);
      } catch (err) {
        const problem = problemOf(err, { conflict: { field: 'email', message: 'is already used by another user' } });
        return setupPage(deps, request, reply, { token, organization: target.organizationName, values, problem, status: 400 });
      }
    });
  },
};
