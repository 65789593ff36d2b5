import type { FastifyRequest } from 'fastify';
import type { FieldError } from '../errors.js';
import { selectField, textField, type Option } from './components.js';
import { addDays, parseDateOnly, zonedDateTimeToUtc } from '../lib/dates.js';
import { queryText } from './forms.js';
import { html, type SafeHtml } from './html.js';
import { viewerOf } from './module.js';

/**
 * The console lists' order and creation-date filter (leads, accounts, the deals table, records, a webhook's
 * delivery log, the erasure receipts): the API's `sort` and `createdAfter`/`createdBefore`, chosen in the
 * search form and kept by the pager. Days are the organization's, as the tables' Created column shows them: a
 * lead created at 23:00 in Los Angeles is found on that day, not on the next UTC one. Each list offers the orders
 * its API takes (records have no name, but their date and number fields; the logs have creation order only).
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
/** The orders of the logs (a webhook's deliveries, erasure receipts): creation order only. */
export const CREATION_CONSOLE_SORTS: readonly Option[] = CONSOLE_SORTS.filter((o) => o.value.endsWith('createdAt'));

export interface ListControls {
  sort: string;
  from: string;
  to: string;
  /** The organization's IANA zone, in which `from` and `to` are read. */
  timeZone: string;
}

const LAST_DAY = '9999-12-31';
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** A control's day, or the API's reason it isn't one ("is not a real calendar date" for 2024-13-45 or 2024-02-31). */
const dayOf = (value: string) => (DAY.test(value) ? parseDateOnly(value) : { ok: false as const, reason: 'must be a date in the form YYYY-MM-DD' });

export function listControlsOf(request: FastifyRequest): ListControls {
  return { sort: queryText(request, 'sort'), from: queryText(request, 'from'), to: queryText(request, 'to'), timeZone: viewerOf(request).organization.timezone };
}

/**
 * The API query of the controls: from/to are whole days of the organization (created on or after the start of
 * `from`, before the start of the day after `to`). A value that is no real day is passed on as typed, so the
 * list's query schema refuses it (400) like any bad control.
 */
export function listControlsQuery(c: ListControls): { sort?: string; createdAfter?: string; createdBefore?: string } {
  // The start of the day `days` after the control's day, moved by `ms`; undefined past 9999-12-31, which bounds nothing.
  const startOf = (value: string, days: number, ms: number) => {
    const day = dayOf(value);
    if (!day.ok) return value;
    if (day.value === LAST_DAY && days > 0) return undefined;
    return new Date(zonedDateTimeToUtc(addDays(day.value, days), 0, 0, c.timeZone).getTime() + ms).toISOString();
  };
  const createdBefore = c.to ? startOf(c.to, 1, 0) : undefined;
  return {
    ...(c.sort ? { sort: c.sort } : {}),
    ...(c.from ? { createdAfter: startOf(c.from, 0, -1) } : {}),
    ...(createdBefore ? { createdBefore } : {}),
  };
}

/**
 * A range whose last day comes before its first finds nothing: said next to "Created to", as a 400 like any bad
 * control, rather than shown as an empty list. (The API answers such a range with an empty page.) `day` names
 * the list's creation time as its table does ("Completed" for erasure receipts).
 */
export function rangeErrors(c: ListControls, day = 'Created'): FieldError[] {
  const from = c.from ? dayOf(c.from) : undefined;
  const to = c.to ? dayOf(c.to) : undefined;
  if (!from?.ok || !to?.ok || to.value >= from.value) return [];
  return [{ field: 'createdBefore', code: 'out_of_range', message: `must be on or after the ${day} from day` }];
}

/** The pager's query parameters for the controls. */
export const listControlsParams = (c: ListControls) => ({ sort: c.sort || undefined, from: c.from || undefined, to: c.to || undefined });

export function listControls(c: ListControls, errors: { field: string; message: string }[] = [], sorts: readonly Option[] = CONSOLE_SORTS, day = 'Created'): SafeHtml {
  const error = (f: string) => errors.find((e) => e.field === f)?.message;
  // The query holds an instant, but the control takes a day: say what is wrong with the day as typed.
  const dayError = (f: string, value: string) => {
    const day = dayOf(value);
    return error(f) && (day.ok ? error(f) : day.reason);
  };
  return html`${selectField({ name: 'sort', label: 'Order', value: c.sort || '-createdAt', options: sorts, error: error('sort'), markOptional: false })}
  ${textField({ name: 'from', label: `${day} from`, type: 'date', value: c.from, error: dayError('createdAfter', c.from), markOptional: false })}
  ${textField({ name: 'to', label: `${day} to`, type: 'date', value: c.to, error: dayError('createdBefore', c.to), markOptional: false })}`;
}
