import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppError } from '../../errors.js';
import { getUserSummary } from '../../modules/orgs/users.service.js';
import { setSessionCookie } from '../auth/cookies.js';
import { changeOwnPassword } from '../auth/passwords.service.js';
import { listOwnSessions, revokeOwnSession, revokeUserSessions } from '../auth/sessions.service.js';
import { actionForm, badge, button, csrfField, dataTable, errorSummary, textField } from '../components.js';
import { duration, timeTag } from '../format.js';
import { fieldMessages, formBody, problemOf, queryText, text, type FormProblem } from '../forms.js';
import { html } from '../html.js';
import { viewerOf, type AdminDeps, type AdminModule } from '../module.js';

const BROWSERS: readonly [RegExp, string][] = [[/Edg\//, 'Edge'], [/Firefox\//, 'Firefox'], [/Chrom(e|ium)\//, 'Chrome'], [/Safari\//, 'Safari']];
const SYSTEMS: readonly [RegExp, string][] = [[/Android/, 'Android'], [/iPhone|iPad/, 'iOS'], [/Windows/, 'Windows'], [/Mac OS X/, 'macOS'], [/Linux/, 'Linux']];

/** "Chrome on Linux": enough to recognise a device, without showing the raw header. */
export function deviceLabel(userAgent: string): string {
  const browser = BROWSERS.find(([re]) => re.test(userAgent))?.[1] ?? 'Unknown browser';
  const system = SYSTEMS.find(([re]) => re.test(userAgent))?.[1];
  return system ? `${browser} on ${system}` : browser;
}

const NOTICES: Record<string, string> = {
  revoked: 'The session was signed out.',
  'others-revoked': 'All your other sessions were signed out.',
  'password-changed': 'Your password was changed. Your other sessions were signed out.',
};

const PASSWORD_LABELS = { currentPassword: 'Current password', newPassword: 'New password', confirmPassword: 'Confirm new password' };

/** "Your account": who you are, the password change form, and the way to your sessions. */
async function accountPage(deps: AdminDeps, request: FastifyRequest, reply: FastifyReply, opts: { problem?: FormProblem; status?: number } = {}) {
  const viewer = viewerOf(request);
  const [me, sessions] = await Promise.all([getUserSummary(deps.ctx, viewer.organization.id, viewer.user.id), listOwnSessions(deps.ctx, viewer)]);
  const f = opts.problem?.fields ?? {};
  return deps.render(request, reply, {
    title: 'Your account',
    status: opts.status,
    notice: NOTICES[queryText(request, 'notice')],
    body: html`<dl class="details"><dt>Name</dt><dd>${me.name}</dd><dt>E-mail</dt><dd>${me.email}</dd><dt>Role</dt><dd>${me.isAdmin ? 'Administrator' : 'Member'}</dd></dl>
<section class="panel" aria-labelledby="change-password"><h2 id="change-password">Change password</h2>
${errorSummary(opts.problem, PASSWORD_LABELS)}
<form method="post" action="/admin/account/password" class="form" novalidate>
  ${csrfField(request)}
  <input type="email" autocomplete="username" value="${me.email}" hidden readonly>
  ${textField({ name: 'currentPassword', label: PASSWORD_LABELS.currentPassword, type: 'password', error: f.currentPassword, required: true, autocomplete: 'current-password' })}
  ${textField({ name: 'newPassword', label: PASSWORD_LABELS.newPassword, type: 'password', error: f.newPassword, required: true, autocomplete: 'new-password', hint: 'At least 10 characters. Your other sessions are signed out; this one stays signed in.' })}
  ${textField({ name: 'confirmPassword', label: PASSWORD_LABELS.confirmPassword, type: 'password', error: f.confirmPassword, required: true, autocomplete: 'new-password' })}
  ${button('Change password')}
</form></section>
<section class="panel" aria-labelledby="sessions"><h2 id="sessions">Sessions</h2>
<p>You are signed in to the console in ${sessions.length === 1 ? '1 place' : `${sessions.length} places`}. <a href="/admin/account/sessions">Your sessions</a></p></section>`,
  });
}

/** "Your account" and "Your sessions": change your password; see where you are signed in and end any of those sessions. */
export const accountModule: AdminModule = {
  name: 'account',
  nav: [],
  register(app, deps) {
    const { ctx } = deps;

    app.get('/account', async (request, reply) => accountPage(deps, request, reply));

    app.post('/account/password', async (request, reply) => {
      const body = formBody(request);
      const input = { currentPassword: text(body, 'currentPassword'), newPassword: text(body, 'newPassword'), confirmPassword: text(body, 'confirmPassword'), ip: request.ip };
      try {
        const result = await changeOwnPassword(ctx, viewerOf(request), input);
        if (result.ok) {
          setSessionCookie(request, reply, result.token);
          return reply.redirect('/admin/account?notice=password-changed', 303);
        }
        const lock = result.retryInMs > 0 ? `Too many failed attempts: try again in ${duration(result.retryInMs)}.` : undefined;
        if (result.reason === 'locked') return accountPage(deps, request, reply, { problem: { fields: {}, message: lock }, status: 429 });
        return accountPage(deps, request, reply, { problem: { fields: fieldMessages(result.errors), message: lock }, status: 400 });
      } catch (err) {
        const problem = problemOf(err);
        return accountPage(deps, request, reply, { problem, status: (err as AppError).status });
      }
    });

    app.get('/account/sessions', async (request, reply) => {
      const viewer = viewerOf(request);
      const sessions = await listOwnSessions(ctx, viewer);
      const tz = viewer.organization.timezone;
      const rows = sessions.map((s) => {
        const current = s.id === viewer.session.id;
        return html`<tr>
  <td>${deviceLabel(s.userAgent)} ${current ? badge('This session', 'good') : ''}</td>
  <td>${s.ip}</td>
  <td>${timeTag(s.createdAt, tz)}</td>
  <td>${timeTag(s.lastSeenAt, tz)}</td>
  <td>${current ? '' : actionForm(request, `/admin/account/sessions/${s.id}/revoke`, 'Sign out', { accessibleName: `Sign out ${deviceLabel(s.userAgent)} session from ${s.ip}` })}</td>
</tr>`;
      });
      return deps.render(request, reply, {
        title: 'Your sessions',
        notice: NOTICES[queryText(request, 'notice')],
        body: html`<p>Browsers where you are signed in to the console. Sessions end after 12 hours without activity, and after 7 days in any case.</p>
${dataTable('Your sessions', ['Device', 'IP address', 'Signed in', 'Last active', 'Action'], rows, 'No sessions.')}
${sessions.length > 1 ? actionForm(request, '/admin/account/sessions/revoke-others', 'Sign out all other sessions', { variant: 'danger' }) : ''}`,
      });
    });

    app.post<{ Params: { id: string } }>('/account/sessions/:id/revoke', async (request, reply) => {
      await revokeOwnSession(ctx, viewerOf(request), request.params.id);
      return reply.redirect('/admin/account/sessions?notice=revoked', 303);
    });

    app.post('/account/sessions/revoke-others', async (request, reply) => {
      const viewer = viewerOf(request);
      await revokeUserSessions(ctx, viewer.organization.id, viewer.user.id, viewer.session.id);
      return reply.redirect('/admin/account/sessions?notice=others-revoked', 303);
    });
  },
};
