import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import { createUser } from '../../modules/orgs/orgs.service.js';
import { getUserSummary, listUserSummaries, setAdministrator, type UserSummary } from '../../modules/orgs/users.service.js';
import { removeConsoleAccess, resetPassword } from '../auth/passwords.service.js';
import { deactivateUser, reactivateUser } from '../auth/activation.service.js';
import { liveSessionCounts, revokeUserSessions } from '../auth/sessions.service.js';
import { actionForm, badge, button, checkbox, csrfField, dataTable, errorSummary, textField } from '../components.js';
import { dayTag } from '../format.js';
import { formBody, orUndefined, problemOf, queryText, text, type FormProblem } from '../forms.js';
import { html } from '../html.js';
import { viewerOf, type AdminDeps, type AdminModule, type Viewer } from '../module.js';

const PATH = '/admin/config/users';
const ADMIN = { console: { access: 'admin' as const } };
const LABELS = { name: 'Name', email: 'E-mail', password: 'Password' };

const NOTICES: Record<string, string> = {
  created: 'User created.',
  'made-admin': 'The user is now an administrator.',
  'removed-admin': 'The user is no longer an administrator.',
  'sessions-revoked': 'The user’s console sessions were signed out.',
  'password-set': 'Password set. The user’s console sessions were signed out; they sign in with the new password.',
  'access-removed': 'Console access removed: the user’s password was deleted and their sessions were signed out.',
  deactivated: 'User deactivated: their console sessions were signed out, their API keys stopped working and they can no longer be given work.',
  reactivated: 'User reactivated: they can sign in again (with their password) and their API keys work again.',
};

const PASSWORD_LABELS = { newPassword: 'New password', confirmPassword: 'Confirm new password' };

interface UserForm {
  name: string;
  email: string;
  admin: boolean;
}

function actions(request: FastifyRequest, viewer: Viewer, u: UserSummary, sessions: number) {
  const self = u.id === viewer.user.id;
  const role = u.isAdmin
    ? self
      ? ''
      : actionForm(request, `${PATH}/${u.id}/remove-admin`, 'Remove admin', { accessibleName: `Remove administrator role from ${u.name}`, confirm: `Remove ${u.name}'s administrator role?` })
    : actionForm(request, `${PATH}/${u.id}/make-admin`, 'Make admin', { accessibleName: `Make ${u.name} an administrator` });
  // Your own password changes only with your current one, on your account page.
  const password = self
    ? html`<a class="button button--secondary" href="/admin/account">Change password</a>`
    : html`<a class="button button--secondary" href="${PATH}/${u.id}/password" aria-label="Set password for ${u.name}">Set password</a>`;
  const signOut = sessions > 0 && !self
    ? actionForm(request, `${PATH}/${u.id}/revoke-sessions`, 'Sign out', { variant: 'danger', accessibleName: `Sign ${u.name} out of every console session`, confirm: `Sign ${u.name} out of every console session?` })
    : '';
  // Nobody deactivates themself; the service also refuses the organization's last active administrator.
  const activation = self
    ? ''
    : u.active
      ? actionForm(request, `${PATH}/${u.id}/deactivate`, 'Deactivate', { variant: 'danger', accessibleName: `Deactivate ${u.name}`, confirm: `Deactivate ${u.name}? They are signed out, can't sign in, their API keys stop working and they can't be given work until reactivated.` })
      : actionForm(request, `${PATH}/${u.id}/reactivate`, 'Reactivate', { accessibleName: `Reactivate ${u.name}`, confirm: `Reactivate ${u.name}? They can sign in again and their API keys work again.` });
  return html`<td class="actions"><div class="button-row">${role}${password}${signOut}${activation}</div></td>`;
}

function createForm(request: FastifyRequest, form: UserForm, problem?: FormProblem) {
  const f = problem?.fields ?? {};
  return html`<section class="panel" aria-labelledby="new-user"><h2 id="new-user">Add a user</h2>
${errorSummary(problem, LABELS)}
<form method="post" action="${PATH}" class="form" novalidate>
  ${csrfField(request)}
  ${textField({ name: 'name', label: LABELS.name, value: form.name, error: f.name, required: true, autocomplete: 'off', maxLength: 200 })}
  ${textField({ name: 'email', label: LABELS.email, type: 'email', value: form.email, error: f.email, required: true, autocomplete: 'off' })}
  ${textField({ name: 'password', label: LABELS.password, type: 'password', error: f.password, autocomplete: 'new-password', hint: 'At least 10 characters. Without one, the user owns leads but cannot sign in to the console.' })}
  ${checkbox({ name: 'admin', label: 'Administrator', checked: form.admin, hint: 'Administrators change configuration: keys, rules, settings and users.' })}
  ${button('Add user')}
</form></section>`;
}

/** `refused`: why an action on a listed user was not done (deactivating yourself or the last active administrator). */
async function renderPage(deps: AdminDeps, request: FastifyRequest, reply: FastifyReply, opts: { form?: UserForm; problem?: FormProblem; refused?: FormProblem; status?: number } = {}) {
  const viewer = viewerOf(request);
  const [users, sessions] = await Promise.all([listUserSummaries(deps.ctx, viewer.organization.id), liveSessionCounts(deps.ctx, viewer.organization.id)]);
  const tz = viewer.organization.timezone;
  const rows = users.map((u) => {
    const n = sessions.get(u.id) ?? 0;
    return html`<tr>
  <td>${u.name}${u.id === viewer.user.id ? html` <span class="muted">(you)</span>` : ''}</td>
  <td>${u.email}</td>
  <td>${u.isAdmin ? badge('Administrator', 'good') : badge('Member')}${u.active ? '' : html` ${badge('Deactivated', 'bad')}`}${u.canSignIn ? '' : html` <span class="muted">no sign-in</span>`}</td>
  <td>${n}</td>
  <td>${dayTag(u.createdAt, tz)}</td>
  ${viewer.user.isAdmin ? actions(request, viewer, u, n) : ''}
</tr>`;
  });
  const head = ['Name', 'E-mail', 'Role', 'Sessions', 'Added', ...(viewer.user.isAdmin ? ['Actions'] : [])];
  return deps.render(request, reply, {
    title: 'Users',
    crumbs: ['Configuration'],
    status: opts.status,
    notice: NOTICES[queryText(request, 'notice')],
    body: html`${errorSummary(opts.refused, {})}${dataTable('Users', head, rows, 'No users.')}
${viewer.user.isAdmin ? createForm(request, opts.form ?? { name: '', email: '', admin: false }, opts.problem) : html`<p class="muted">Only administrators can add users or change roles.</p>`}`,
  });
}

function removeAccessPanel(request: FastifyRequest, user: UserSummary) {
  return html`<section class="panel panel--danger" aria-labelledby="remove-access"><h2 id="remove-access">Remove console access</h2>
<p>Deletes ${user.name}'s password and signs them out of every console session. They keep their leads, deals and API keys; set a password again to give access back.</p>
${actionForm(request, `${PATH}/${user.id}/remove-access`, 'Remove console access', { variant: 'danger', accessibleName: `Remove ${user.name}'s console access`, confirm: `Remove ${user.name}'s console access? Their password is deleted and every console session of theirs is signed out.` })}
</section>`;
}

/** An administrator sets another user's password (a reset, or console access for a user created without one), or removes it. */
async function passwordPage(deps: AdminDeps, request: FastifyRequest, reply: FastifyReply, userId: string, opts: { problem?: FormProblem; status?: number } = {}) {
  const user = await getUserSummary(deps.ctx, viewerOf(request).organization.id, userId);
  const f = opts.problem?.fields ?? {};
  return deps.render(request, reply, {
    title: `Set password for ${user.name}`,
    crumbs: ['Configuration', 'Users'],
    status: opts.status,
    body: html`<p>${user.name} (${user.email}) ${user.canSignIn
      ? 'can sign in to the console now. A new password replaces the current one and signs them out of every console session.'
      : 'cannot sign in to the console yet. With a password, they can.'}</p>
<p class="muted">Give the password to ${user.name} over a channel you trust; they can change it afterwards under Your account.</p>
${errorSummary(opts.problem, PASSWORD_LABELS)}
<form method="post" action="${PATH}/${user.id}/password" class="form" novalidate>
  ${csrfField(request)}
  ${textField({ name: 'newPassword', label: PASSWORD_LABELS.newPassword, type: 'password', error: f.newPassword, required: true, autocomplete: 'off', hint: 'At least 10 characters.' })}
  ${textField({ name: 'confirmPassword', label: PASSWORD_LABELS.confirmPassword, type: 'password', error: f.confirmPassword, required: true, autocomplete: 'off' })}
  <p class="button-row">${button('Set password')} <a class="button button--secondary" href="${PATH}">Cancel</a></p>
</form>
${user.canSignIn ? removeAccessPanel(request, user) : ''}`,
  });
}

/** Configuration › Users: list, add, grant or withdraw the administrator role, set or remove passwords, sign a user out everywhere, deactivate or reactivate. */
export const usersModule: AdminModule = {
  name: 'users',
  nav: [{ section: 'configuration', label: 'Users', href: PATH, order: 40, description: 'Who can sign in, administrators, sessions, deactivation.' }],
  register(app, deps) {
    const { ctx } = deps;
    app.get('/config/users', async (request, reply) => renderPage(deps, request, reply));

    app.post('/config/users', { config: ADMIN }, async (request, reply) => {
      const body = formBody(request);
      const form: UserForm = { name: text(body, 'name'), email: text(body, 'email'), admin: text(body, 'admin') === 'on' };
      try {
        await createUser(ctx, { organizationId: viewerOf(request).organization.id, ...form, password: orUndefined(text(body, 'password')) });
        return reply.redirect(`${PATH}?notice=created`, 303);
      } catch (err) {
        const problem = problemOf(err, { conflict: { field: 'email', message: 'is already used by another user' } });
        return renderPage(deps, request, reply, { form, problem, status: 400 });
      }
    });

    for (const [action, isAdmin] of [['make-admin', true], ['remove-admin', false]] as const) {
      app.post<{ Params: { id: string } }>(`/config/users/:id/${action}`, { config: ADMIN }, async (request, reply) => {
        const viewer = viewerOf(request);
        await setAdministrator(ctx, viewer.organization.id, request.params.id, isAdmin, viewer.user.id);
        return reply.redirect(`${PATH}?notice=${isAdmin ? 'made-admin' : 'removed-admin'}`, 303);
      });
    }

    app.get<{ Params: { id: string } }>('/config/users/:id/password', { config: ADMIN }, async (request, reply) => {
      if (request.params.id === viewerOf(request).user.id) return reply.redirect('/admin/account', 303);
      return passwordPage(deps, request, reply, request.params.id);
    });

    app.post<{ Params: { id: string } }>('/config/users/:id/password', { config: ADMIN }, async (request, reply) => {
      const viewer = viewerOf(request);
      const body = formBody(request);
      try {
        await resetPassword(ctx, viewer.organization.id, request.params.id, { newPassword: text(body, 'newPassword'), confirmPassword: text(body, 'confirmPassword') }, viewer.user.id);
        return reply.redirect(`${PATH}?notice=password-set`, 303);
      } catch (err) {
        const problem = problemOf(err);
        return passwordPage(deps, request, reply, request.params.id, { problem, status: (err as AppError).status });
      }
    });

    app.post<{ Params: { id: string } }>('/config/users/:id/remove-access', { config: ADMIN }, async (request, reply) => {
      const viewer = viewerOf(request);
      await removeConsoleAccess(ctx, viewer.organization.id, request.params.id, viewer.user.id);
      return reply.redirect(`${PATH}?notice=access-removed`, 303);
    });

    app.post<{ Params: { id: string } }>('/config/users/:id/deactivate', { config: ADMIN }, async (request, reply) => {
      const viewer = viewerOf(request);
      try {
        await deactivateUser(ctx, viewer.organization.id, request.params.id, viewer.user.id);
        return reply.redirect(`${PATH}?notice=deactivated`, 303);
      } catch (err) {
        if (!(err instanceof AppError) || err.code !== 'CONFLICT') throw err;
        return renderPage(deps, request, reply, { refused: problemOf(err), status: err.status });
      }
    });

    app.post<{ Params: { id: string } }>('/config/users/:id/reactivate', { config: ADMIN }, async (request, reply) => {
      await reactivateUser(ctx, viewerOf(request).organization.id, request.params.id);
      return reply.redirect(`${PATH}?notice=reactivated`, 303);
    });

    app.post<{ Params: { id: string } }>('/config/users/:id/revoke-sessions', { config: ADMIN }, async (request, reply) => {
      const viewer = viewerOf(request);
      const keep = request.params.id === viewer.user.id ? viewer.session.id : undefined;
      await revokeUserSessions(ctx, viewer.organization.id, request.params.id, keep);
      return reply.redirect(`${PATH}?notice=sessions-revoked`, 303);
    });
  },
};
