import { listOwnSessions, revokeOwnSession, revokeUserSessions } from '../auth/sessions.service.js';
import { actionForm, badge, dataTable } from '../components.js';
import { timeTag } from '../format.js';
import { queryText } from '../forms.js';
import { html } from '../html.js';
import { viewerOf, type AdminModule } from '../module.js';

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
};

/** "Your sessions": where the user is signed in, with a way to end any of those sessions. */
export const accountModule: AdminModule = {
  name: 'account',
  nav: [],
  register(app, deps) {
    const { ctx } = deps;

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
