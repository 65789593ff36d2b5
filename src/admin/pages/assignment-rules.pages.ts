import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import { getAssignmentRules, setAssignmentRules } from '../../modules/orgs/rules.service.js';
import { LEAD_SOURCES, type AssignmentRule } from '../../modules/orgs/rules.schemas.js';
import { listUsers } from '../../modules/orgs/users.store.js';
import { button, csrfField, dataTable, errorSummary, textArea } from '../components.js';
import { formBody, problemOf, queryText, text, type FormProblem } from '../forms.js';
import { html } from '../html.js';
import { viewerOf, type AdminDeps, type AdminModule } from '../module.js';

const PATH = '/admin/config/assignment-rules';
const LABELS = { rules: 'Rules' };

const EXAMPLE = JSON.stringify(
  { rules: [{ id: 'web', match: { source: 'WEBSITE' }, assign: { type: 'round_robin', userIds: ['<user id>', '<user id>'] } }, { id: 'rest', match: {}, assign: { type: 'user', userId: '<user id>' } }] },
  null,
  2,
);

function describeRule(rule: AssignmentRule, names: Map<string, string>): string {
  const conditions = [rule.match.source && `source is ${rule.match.source}`, rule.match.sourceCampaign && `campaign is ${rule.match.sourceCampaign}`].filter(Boolean);
  const who = (id: string) => names.get(id) ?? id;
  const action = rule.assign.type === 'user' ? `assign to ${who(rule.assign.userId)}` : `assign in turn to ${rule.assign.userIds.map(who).join(', ')}`;
  return `${conditions.length ? `When ${conditions.join(' and ')}` : 'Every lead'}: ${action}`;
}

/** `rules.0.assign` → "rule 1 (assign)": where in the document a problem is, in words. */
function where(field: string): string {
  const m = /^rules\.(\d+)(?:\.(.+))?$/.exec(field);
  if (!m) return field === 'rules' ? 'the document' : field;
  return `rule ${Number(m[1]) + 1}${m[2] ? ` (${m[2]})` : ''}`;
}

/** Every problem of the document, in one message next to the editor. */
function rulesProblem(err: unknown): FormProblem {
  if (err instanceof AppError && err.code === 'VALIDATION_FAILED' && err.errors?.length) {
    return { fields: { rules: err.errors.map((e) => `– ${where(e.field)}: ${e.message}`).join(' ') } };
  }
  return problemOf(err);
}

async function renderPage(deps: AdminDeps, request: FastifyRequest, reply: FastifyReply, opts: { draft?: string; problem?: FormProblem; status?: number } = {}) {
  const viewer = viewerOf(request);
  const db = deps.ctx.database.db;
  const [rules, users] = await Promise.all([getAssignmentRules(db, viewer.organization.id), listUsers(db, viewer.organization.id)]);
  const names = new Map(users.map((u) => [u.id, u.name]));
  const current = rules.length
    ? html`<ol class="rules">${rules.map((r) => html`<li><code>${r.id}</code> ${describeRule(r, names)}</li>`)}</ol>`
    : html`<p class="empty">No rules: new leads keep the owner they are created with (or none).</p>`;
  const editor = viewer.user.isAdmin
    ? html`<section class="panel" aria-labelledby="edit-rules"><h2 id="edit-rules">Edit the rules</h2>
${errorSummary(opts.problem, LABELS)}
<form method="post" action="${PATH}" class="form form--wide" novalidate>
  ${csrfField(request)}
  ${textArea({ name: 'rules', label: LABELS.rules, value: opts.draft ?? JSON.stringify({ rules }, null, 2), error: opts.problem?.fields.rules, rows: 16, code: true, required: true, hint: html`JSON in the same form as <code>crm rules set</code>. Sources: ${LEAD_SOURCES.join(', ')}.` })}
  ${button('Save rules')}
</form>
<details><summary>Example</summary><pre class="code">${EXAMPLE}</pre></details>
</section>
<section class="panel" aria-labelledby="user-ids"><h2 id="user-ids">User ids</h2>
${dataTable('User ids', ['Name', 'Id'], users.map((u) => html`<tr><td>${u.name}</td><td><code>${u.id}</code></td></tr>`), 'No users.')}
</section>`
    : html`<p class="muted">Only administrators can change the rules.</p>`;
  return deps.render(request, reply, {
    title: 'Assignment rules',
    crumbs: ['Configuration'],
    status: opts.status,
    notice: queryText(request, 'notice') === 'saved' ? 'Assignment rules saved.' : undefined,
    body: html`<p>When a lead is created without an owner, the first rule that matches sets it.</p>
<section class="panel" aria-labelledby="current-rules"><h2 id="current-rules">Current rules</h2>${current}</section>
${editor}`,
  });
}

/** Configuration › Assignment rules: the same document as `crm rules set`, validated by setAssignmentRules. */
export const assignmentRulesModule: AdminModule = {
  name: 'assignment-rules',
  nav: [{ section: 'configuration', label: 'Assignment rules', href: PATH, order: 20, description: 'Who owns a new lead, by source and campaign.' }],
  register(app, deps) {
    app.get('/config/assignment-rules', async (request, reply) => renderPage(deps, request, reply));

    app.post('/config/assignment-rules', { config: { console: { access: 'admin' } } }, async (request, reply) => {
      const draft = text(formBody(request), 'rules');
      let document: unknown;
      try {
        document = JSON.parse(draft);
      } catch (err) {
        const reason = err instanceof Error ? err.message : 'parse error';
        return renderPage(deps, request, reply, { draft, problem: { fields: { rules: `is not valid JSON (${reason})` } }, status: 400 });
      }
      try {
        await setAssignmentRules(deps.ctx.database, viewerOf(request).organization.id, document, deps.ctx.clock.now());
        return reply.redirect(`${PATH}?notice=saved`, 303);
      } catch (err) {
        return renderPage(deps, request, reply, { draft, problem: rulesProblem(err), status: 400 });
      }
    });
  },
};
