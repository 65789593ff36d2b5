import type { FastifyRequest } from 'fastify';
import type { Pagination } from '../lib/pagination.js';
import { CSRF_FIELD } from './auth/cookies.js';
import type { FormProblem } from './forms.js';
import { href, html, type HtmlValue, type SafeHtml } from './html.js';

/** The hidden synchronizer token every console form carries (checked by the guard on POST). */
export function csrfField(request: FastifyRequest): SafeHtml {
  return html`<input type="hidden" name="${CSRF_FIELD}" value="${request.csrfToken ?? ''}">`;
}

interface FieldBase {
  name: string;
  label: string;
  error?: string | undefined;
  hint?: string | HtmlValue;
  required?: boolean;
  /** Optional fields say so in their label, except where nothing is ever required (a search box). */
  markOptional?: boolean;
}

const fieldId = (name: string) => `f-${name.replace(/[^A-Za-z0-9_-]/g, '-')}`;

/** Label, hint and error wired to the control (aria-describedby, aria-invalid) so screen readers announce them. */
function describedBy(p: FieldBase): { id: string; describedBy: string | false; invalid: SafeHtml | false } {
  const id = fieldId(p.name);
  const ids = [p.hint ? `${id}-hint` : '', p.error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return { id, describedBy: ids || false, invalid: p.error ? html` aria-invalid="true"` : false };
}

function frame(p: FieldBase, control: SafeHtml): SafeHtml {
  const id = fieldId(p.name);
  return html`<div class="field${p.error ? ' field--error' : ''}">
  <label for="${id}">${p.label}${p.required || p.markOptional === false ? '' : html` <span class="optional">(optional)</span>`}</label>
  ${p.hint ? html`<p class="hint" id="${id}-hint">${p.hint}</p>` : ''}
  ${p.error ? html`<p class="field-error" id="${id}-error"><span class="visually-hidden">Error:</span> ${p.label} ${p.error}</p>` : ''}
  ${control}
</div>`;
}

export interface InputProps extends FieldBase {
  value?: string | null | undefined;
  type?: 'text' | 'email' | 'password' | 'search' | 'tel' | 'date' | 'datetime-local' | 'url';
  autocomplete?: string;
  list?: string;
  maxLength?: number;
  inputMode?: string;
}

export function textField(p: InputProps): SafeHtml {
  const d = describedBy(p);
  return frame(
    p,
    html`<input id="${d.id}" name="${p.name}" type="${p.type ?? 'text'}" value="${p.value ?? ''}"${p.required ? html` required` : ''}${d.invalid}${
      d.describedBy ? html` aria-describedby="${d.describedBy}"` : ''
    }${p.autocomplete ? html` autocomplete="${p.autocomplete}"` : ''}${p.list ? html` list="${p.list}"` : ''}${
      p.maxLength ? html` maxlength="${p.maxLength}"` : ''
    }${p.inputMode ? html` inputmode="${p.inputMode}"` : ''}>`,
  );
}

export function textArea(p: FieldBase & { value?: string | null | undefined; rows?: number; code?: boolean }): SafeHtml {
  const d = describedBy(p);
  return frame(
    p,
    html`<textarea id="${d.id}" name="${p.name}" rows="${p.rows ?? 4}"${p.code ? html` class="code" spellcheck="false"` : ''}${p.required ? html` required` : ''}${d.invalid}${
      d.describedBy ? html` aria-describedby="${d.describedBy}"` : ''
    }>${p.value ?? ''}</textarea>`,
  );
}

export interface Option {
  value: string;
  label: string;
}

export function selectField(p: FieldBase & { value?: string | null | undefined; options: readonly Option[]; blank?: string }): SafeHtml {
  const d = describedBy(p);
  const options = p.options.map((o) => html`<option value="${o.value}"${o.value === (p.value ?? '') ? html` selected` : ''}>${o.label}</option>`);
  return frame(
    p,
    html`<select id="${d.id}" name="${p.name}"${d.invalid}${d.describedBy ? html` aria-describedby="${d.describedBy}"` : ''}>${
      p.blank !== undefined ? html`<option value="">${p.blank}</option>` : ''
    }${options}</select>`,
  );
}

/** A named item (lead, account, deal, record) offered by a picker. */
export interface PickerItem {
  id: string;
  name: string;
}

/**
 * An id input that suggests the newest items of a kind (a datalist: their names as labels) and names the one
 * currently chosen under it; any id of the organization may be pasted. The service checks it.
 */
export function pickerField(p: FieldBase & { value: string; items: readonly PickerItem[]; currentName: string | undefined; what: string }): SafeHtml {
  const listId = `${fieldId(p.name)}-choices`;
  const hint = html`${p.currentName ? html`Currently <strong>${p.currentName}</strong>. ` : ''}Pick one of the newest ${p.what} or paste an id.`;
  return html`${textField({ name: p.name, label: p.label, value: p.value, error: p.error, required: p.required, list: listId, autocomplete: 'off', hint })}
<datalist id="${listId}">${p.items.map((r) => html`<option value="${r.id}" label="${r.name}"></option>`)}</datalist>`;
}

/** A group of checkboxes sharing one name, in a fieldset whose legend names the group. */
export function checkboxGroup(p: FieldBase & { options: readonly Option[]; checked: ReadonlySet<string> }): SafeHtml {
  const id = fieldId(p.name);
  const boxes = p.options.map(
    (o, i) => html`<label class="check" for="${id}-${i}"><input type="checkbox" id="${id}-${i}" name="${p.name}" value="${o.value}"${
      p.checked.has(o.value) ? html` checked` : ''
    }> <span>${o.label}</span></label>`,
  );
  return html`<fieldset class="field${p.error ? ' field--error' : ''}" id="${id}"${p.error ? html` aria-describedby="${id}-error"` : ''}>
  <legend>${p.label}</legend>
  ${p.hint ? html`<p class="hint">${p.hint}</p>` : ''}
  ${p.error ? html`<p class="field-error" id="${id}-error"><span class="visually-hidden">Error:</span> ${p.label} ${p.error}</p>` : ''}
  <div class="checks">${boxes}</div>
</fieldset>`;
}

/** A checkbox; `errorName` names it in its error when the label is a sentence ("Confirmation must be ticked"). */
export function checkbox(p: { name: string; label: string; checked: boolean; hint?: string; value?: string; error?: string | undefined; errorName?: string }): SafeHtml {
  const id = fieldId(p.name);
  const described = [p.hint ? `${id}-hint` : '', p.error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return html`<div class="field${p.error ? ' field--error' : ''}">${p.error ? html`<p class="field-error" id="${id}-error"><span class="visually-hidden">Error:</span> ${p.errorName ?? p.label} ${p.error}</p>` : ''}<label class="check" for="${id}"><input type="checkbox" id="${id}" name="${p.name}" value="${p.value ?? 'on'}"${
    p.checked ? html` checked` : ''
  }${p.error ? html` aria-invalid="true"` : ''}${described ? html` aria-describedby="${described}"` : ''}> <span>${p.label}</span></label>${p.hint ? html`<p class="hint" id="${id}-hint">${p.hint}</p>` : ''}</div>`;
}

/**
 * The list of problems at the top of a form (role=alert, focused by admin.js), each linking to its field;
 * `labels` names the fields as the form does.
 */
export function errorSummary(problem: FormProblem | undefined, labels: Readonly<Record<string, string>>): SafeHtml | '' {
  if (!problem || (!problem.message && Object.keys(problem.fields).length === 0)) return '';
  const items = Object.entries(problem.fields).map(
    ([field, message]) => html`<li><a href="#${fieldId(field)}">${labels[field] ?? field} ${message}</a></li>`,
  );
  return html`<div class="error-summary" role="alert" tabindex="-1" data-autofocus>
  <h2>There is a problem</h2>
  ${problem.message ? html`<p>${problem.message}</p>` : ''}
  ${items.length ? html`<ul>${items}</ul>` : ''}
</div>`;
}

/** A submit button; `danger` for destructive actions. */
export function button(label: HtmlValue, variant: 'primary' | 'secondary' | 'danger' = 'primary', attrs: SafeHtml | '' = ''): SafeHtml {
  return html`<button type="submit" class="button button--${variant}"${attrs}>${label}</button>`;
}

/** A one-button POST form (revoke, make admin): the button's accessible name says what and to whom. */
export function actionForm(request: FastifyRequest, action: string, label: HtmlValue, opts: { variant?: 'secondary' | 'danger'; confirm?: string; accessibleName?: string } = {}): SafeHtml {
  return html`<form method="post" action="${action}" class="inline-form"${opts.confirm ? html` data-confirm="${opts.confirm}"` : ''}>${csrfField(request)}${button(
    label,
    opts.variant ?? 'secondary',
    opts.accessibleName ? html` aria-label="${opts.accessibleName}"` : '',
  )}</form>`;
}

/** A scrollable, keyboard-focusable table region, labelled by its caption. */
export function dataTable(caption: string, head: readonly string[], rows: readonly SafeHtml[], empty: string): SafeHtml {
  if (rows.length === 0) return html`<p class="empty">${empty}</p>`;
  return html`<div class="table-wrap" role="region" aria-label="${caption}" tabindex="0"><table>
  <caption class="visually-hidden">${caption}</caption>
  <thead><tr>${head.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead>
  <tbody>${rows}</tbody>
</table></div>`;
}

/** Previous / next links and the position, keeping the other query parameters (e.g. `q`). */
export function pager(path: string, query: Record<string, string | undefined>, pagination: Pagination): SafeHtml | '' {
  const p = { ...pagination, page: pagination.page ?? 1, total: pagination.total ?? 0 };
  if (p.total === 0) return '';
  const first = (p.page - 1) * p.limit + 1;
  const last = Math.min(p.total, p.page * p.limit);
  const link = (page: number, label: string, rel: string) => html`<a class="button button--secondary" rel="${rel}" href="${href(path, { ...query, page })}">${label}</a>`;
  return html`<nav class="pager" aria-label="Pagination">
  <p>Showing ${first.toLocaleString('en-US')}–${last.toLocaleString('en-US')} of ${p.total.toLocaleString('en-US')}</p>
  <div class="pager-links">${p.page > 1 ? link(p.page - 1, 'Previous page', 'prev') : ''}${p.hasMore ? link(p.page + 1, 'Next page', 'next') : ''}</div>
</nav>`;
}

/** A secret shown exactly once (API key, signing secret), with a copy button that admin.js enables. */
export function secretOnce(label: string, value: string, note: string): SafeHtml {
  return html`<section class="secret" aria-labelledby="secret-title">
  <h2 id="secret-title">${label}</h2>
  <p>${note}</p>
  <div class="secret-row">
    <label class="visually-hidden" for="secret-value">${label}</label>
    <input id="secret-value" class="code" type="text" readonly value="${value}">
    <button type="button" class="button button--primary" data-copy="secret-value" hidden>Copy</button>
  </div>
  <p class="copy-status" role="status" aria-live="polite"></p>
</section>`;
}

export function badge(label: string, tone: 'neutral' | 'good' | 'warn' | 'bad' = 'neutral'): SafeHtml {
  return html`<span class="badge badge--${tone}">${label}</span>`;
}

/**
 * A GET form over a table: the search box and any further filters (`extra`), a submit button and a link
 * clearing them all when something is set.
 */
export function searchForm(p: { action: string; label: string; q: string; error?: string | undefined; hint: string; extra?: SafeHtml; active?: boolean; submit?: string }): SafeHtml {
  return html`<form method="get" action="${p.action}" class="search" role="search">
  ${textField({ name: 'q', label: p.label, type: 'search', value: p.q, error: p.error, markOptional: false, hint: p.hint })}
  ${p.extra ?? ''}
  ${button(p.submit ?? 'Search', 'secondary')}
  ${p.q || p.active ? html`<a href="${p.action}">Clear</a>` : ''}
</form>`;
}
