import type { FastifyReply, FastifyRequest } from 'fastify';
import { countDealsByStage } from '../../modules/deals/deals.store.js';
import { MAX_STAGES, STAGE_KINDS, type DealStage } from '../../modules/deals/stages.schemas.js';
import { getDealStages, setDealStages } from '../../modules/deals/stages.service.js';
import { badge, button, csrfField, dataTable, errorSummary, selectField, textField } from '../components.js';
import { plural } from '../../lib/plural.js';
import { formBody, queryText, type FormProblem } from '../forms.js';
import { html, type SafeHtml } from '../html.js';
import { viewerOf, type AdminDeps, type AdminModule } from '../module.js';
import { conflictingItem, submittedVersion, versionField } from './edit-version.js';
import { filledRows, moveRow, readRows, rowAction, rowProblem, withBlankRows, type Row } from '../rows.js';

const PATH = '/admin/config/deal-stages';
const KEYS = ['key', 'label', 'kind'] as const;
type StageRow = Row<(typeof KEYS)[number]>;
const BLANK_ROWS = 2;
const KIND_LABELS: Record<DealStage['kind'], string> = { open: 'Open', won: 'Won (closed)', lost: 'Lost (closed)' };

function kindBadge(kind: DealStage['kind']): SafeHtml {
  return kind === 'open' ? badge('Open') : badge(kind === 'won' ? 'Won' : 'Lost', kind === 'won' ? 'good' : 'bad');
}

function stageRow(row: StageRow, i: number, count: number, f: Record<string, string>): SafeHtml {
  const name = row.label.trim() || row.key.trim() || `stage ${i + 1}`;
  const move = (dir: 'up' | 'down', label: string) => html`<button type="submit" name="_action" value="${dir}:stages:${i}" class="button button--secondary" formnovalidate aria-label="Move ${name} ${dir}">${label}</button>`;
  return html`<fieldset class="row-editor" id="f-stages-${i}">
  <legend>Stage ${i + 1}</legend>
  ${textField({ name: `stages.${i}.key`, label: 'Key', value: row.key, error: f[`stages.${i}.key`], markOptional: false, autocomplete: 'off', maxLength: 50 })}
  ${textField({ name: `stages.${i}.label`, label: 'Label', value: row.label, error: f[`stages.${i}.label`], markOptional: false, autocomplete: 'off', maxLength: 100 })}
  ${selectField({ name: `stages.${i}.kind`, label: 'Kind', value: row.kind || 'open', error: f[`stages.${i}.kind`], options: STAGE_KINDS.map((k) => ({ value: k, label: KIND_LABELS[k] })), markOptional: false })}
  <div class="row-buttons">${i > 0 ? move('up', '↑ Up') : ''}${i < count - 1 ? move('down', '↓ Down') : ''}</div>
</fieldset>`;
}

function editor(request: FastifyRequest, rows: readonly StageRow[], problem: FormProblem | undefined, version: string): SafeHtml {
  const f = problem?.fields ?? {};
  const labels = Object.fromEntries(Object.keys(f).map((field) => [field, field.replace(/^stages\.(\d+)\.(\w+)$/, (_, n: string, k: string) => `Stage ${Number(n) + 1} ${k}`).replace(/^stages$/, 'Stages')]));
  return html`<section class="panel" aria-labelledby="edit-stages"><h2 id="edit-stages">Edit the stages</h2>
${errorSummary(problem, labels)}
<form method="post" action="${PATH}" class="form form--wide" novalidate>
  ${csrfField(request)}${versionField(version)}
  <p class="hint" id="stages-hint">In pipeline order: a new deal starts in the first stage. Keys are lower-case letters, digits and _, starting with a letter; deals store them, so a key still used by deals can't be removed. To remove a stage, empty its key and label.</p>
  ${f.stages ? html`<p class="field-error" id="f-stages-error"><span class="visually-hidden">Error:</span> ${f.stages}</p>` : ''}
  <div class="rows" id="f-stages">${rows.map((row, i) => stageRow(row, i, rows.length, f))}</div>
  <div class="form-actions">${button('Save stages')} ${button('Add more rows', 'secondary', html` name="_action" value="more:stages" formnovalidate`)}</div>
</form></section>`;
}

/** A stage's deals as the table shows them: the live ones (a link to them), and those in the trash, which still hold it. */
function dealsCell(key: string, live: number, trashed: number): SafeHtml {
  const inTrash = trashed ? html` (+${trashed.toLocaleString('en-US')} in the <a href="/admin/data/deals/trash">trash</a>)` : '';
  return html`<a href="/admin/data/deals?stage=${key}">${plural(live, 'deal')}</a>${inTrash}`;
}

/**
 * The page; the editor shows `rows` (else the stages in force) and is saved against `version` (else the tag of the
 * stages in force): after a refusal, the version the user's rows were edited from, so a save can't overwrite a change made meanwhile.
 */
async function renderPage(deps: AdminDeps, request: FastifyRequest, reply: FastifyReply, opts: { rows?: StageRow[]; version?: string; problem?: FormProblem; status?: number } = {}) {
  const viewer = viewerOf(request);
  const db = deps.ctx.database.db;
  const stages = await getDealStages(db, viewer.organization.id);
  const keys = stages.map((s) => s.key);
  const [live, trashed] = await Promise.all([countDealsByStage(db, viewer.organization.id, keys), countDealsByStage(db, viewer.organization.id, keys, 'trash')]);
  const table = dataTable(
    'Deal stages',
    ['Order', 'Label', 'Key', 'Kind', 'Deals'],
    stages.map((s, i) => html`<tr><td>${i + 1}</td><td>${s.label}</td><td><code>${s.key}</code></td><td>${kindBadge(s.kind)}</td><td>${dealsCell(s.key, live.get(s.key) ?? 0, trashed.get(s.key) ?? 0)}</td></tr>`),
    'No stages.',
  );
  const rows = opts.rows ?? withBlankRows(stages.map((s) => ({ key: s.key, label: s.label, kind: s.kind })), KEYS, BLANK_ROWS, { kind: 'open' });
  return deps.render(request, reply, {
    title: 'Deal stages',
    crumbs: ['Configuration'],
    status: opts.status,
    notice: queryText(request, 'notice') === 'saved' ? 'Deal stages saved.' : undefined,
    body: html`<p>The pipeline every deal moves through, shown as the columns of the <a href="/admin/data/deals/board">deals board</a>. Open stages are in progress; won and lost close a deal.</p>
${table}
${viewer.user.isAdmin ? editor(request, rows, opts.problem, opts.version ?? deps.ctx.entityTagger.tagOf(stages)) : html`<p class="muted">Only administrators can change the stages.</p>`}`,
  });
}

/** What the user's rows held, for the message of a save refused because the stages changed meanwhile. */
const describeRows = (rows: readonly StageRow[]) => rows.map((r) => `${r.key.trim()} “${r.label.trim()}” (${r.kind || 'open'})`).join('; ');

/** Configuration › Deal stages: the ordered list, edited row by row and saved with setDealStages. */
export const dealStagesModule: AdminModule = {
  name: 'deal-stages',
  nav: [{ section: 'configuration', label: 'Deal stages', href: PATH, order: 22, description: 'The pipeline deals move through, in order.' }],
  register(app, deps) {
    app.get('/config/deal-stages', async (request, reply) => renderPage(deps, request, reply));

    app.post('/config/deal-stages', { config: { console: { access: 'admin' } } }, async (request, reply) => {
      const body = formBody(request);
      const rows = readRows(body, 'stages', KEYS, MAX_STAGES + 20);
      const action = rowAction(body);
      const version = submittedVersion(body);
      if (action.kind === 'more') return renderPage(deps, request, reply, { rows: withBlankRows(rows, KEYS, 3, { kind: 'open' }), version });
      if (action.kind === 'move') return renderPage(deps, request, reply, { rows: moveRow(rows, action.index, action.by), version });
      const filled = filledRows(rows, ['key', 'label']);
      try {
        const stages = filled.map(({ row }) => ({ key: row.key.trim(), label: row.label, kind: row.kind }));
        await setDealStages(deps.ctx, viewerOf(request).organization.id, { stages }, { ifMatch: version });
        return reply.redirect(`${PATH}?notice=saved`, 303);
      } catch (err) {
        if (conflictingItem(err, 'stages')) {
          // The editor shows the stages now in force (and their tag); the user's list is quoted so it can be redone.
          const message = `The stages were changed by someone else since you opened this page, so your list was not saved. The editor now shows the current stages. Your list was: ${describeRows(filled.map((r) => r.row))}. Review them and save again.`;
          return renderPage(deps, request, reply, { problem: { fields: {}, message }, status: 409 });
        }
        return renderPage(deps, request, reply, { rows, version, problem: rowProblem(err, { stages: filled.map((r) => r.at) }), status: 400 });
      }
    });
  },
};
