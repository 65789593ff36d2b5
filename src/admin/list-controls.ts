import type { FastifyRequest } from 'fastify';
import { selectField, textField, type Option } from './components.js';
import { queryText } from './forms.js';
import { html, type SafeHtml } from './html.js';

/**
 * The console lists' order and creation-date filter (leads, accounts, the deals table, records): the API's
 * `sort` and `createdAfter`/`createdBefore`, chosen in the search form and kept by the pager. Days are UTC
 * days. Each list offers the orders its API takes (records have no name, but their date and number fields).
 */

export const CONSOLE_SORTS: readonly Option[] = [
  { value: '-createdAt', label: 'Newest first' },
  { value: 'createdAt', label: 'Oldest first' },
  { value: '-updatedAt', label: 'Recently changed' },
  { value: 'name', label: 'Name A–Z' },
  { value: '-name', label: 'Name Z–A' },
];

/** The orders of lists whose items have no name. */
export const TIME_CONSOLE_SORTS: readonly Option[] = CONSOLE_SORTS.filter((o) => !o.value.endsWith('name'));

export interface ListControls {
  sort: string;
  from: string;
  to: string;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

export function listControlsOf(request: FastifyRequest): ListControls {
  return { sort: queryText(request, 'sort'), from: queryText(request, 'from'), to: queryText(request, 'to') };
}

/** The API query of the controls: from/to are whole days (created on or after `from`, on or before `to`). */
export function listControlsQuery(c: ListControls): { sort?: string; createdAfter?: string; createdBefore?: string } {
  const dayMs = 86_400_000;
  const shift = (day: string, ms: number) => new Date(Date.parse(`${day}T00:00:00.000Z`) + ms).toISOString();
  return {
    ...(c.sort ? { sort: c.sort } : {}),
    ...(DAY.test(c.from) ? { createdAfter: shift(c.from, -1) } : c.from ? { createdAfter: c.from } : {}),
    ...(DAY.test(c.to) ? { createdBefore: shift(c.to, dayMs) } : c.to ? { createdBefore: c.to } : {}),
  };
}

/** The pager's query parameters for the controls. */
export const listControlsParams = (c: ListControls) => ({ sort: c.sort || undefined, from: c.from || undefined, to: c.to || undefined });

export function listControls(c: ListControls, errors: { field: string; message: string }[] = [], sorts: readonly Option[] = CONSOLE_SORTS): SafeHtml {
  const error = (f: string) => errors.find((e) => e.field === f)?.message;
  return html`${selectField({ name: 'sort', label: 'Order', value: c.sort || '-createdAt', options: sorts, error: error('sort'), markOptional: false })}
  ${textField({ name: 'from', label: 'Created from', type: 'date', value: c.from, error: error('createdAfter'), markOptional: false })}
  ${textField({ name: 'to', label: 'Created to', type: 'date', value: c.to, error: error('createdBefore'), markOptional: false })}`;
}
