import { html, type SafeHtml } from './html.js';
import { plural } from '../lib/plural.js';

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string, withTime: boolean): Intl.DateTimeFormat {
  const key = `${timeZone}|${withTime}`;
  let f = formatters.get(key);
  if (!f) {
    const time = withTime ? ({ hour: '2-digit', minute: '2-digit' } as const) : {};
    f = new Intl.DateTimeFormat('en-GB', { timeZone, day: 'numeric', month: 'short', year: 'numeric', ...time });
    formatters.set(key, f);
  }
  return f;
}

/** An instant as the organization reads it ("21 Nov 2026, 10:00" in its time zone), machine-readable too. */
export function timeTag(iso: string | null, timeZone: string, empty = '—'): SafeHtml {
  if (!iso) return html`<span class="muted">${empty}</span>`;
  return html`<time datetime="${iso}">${formatter(timeZone, true).format(new Date(iso))}</time>`;
}

/** The day only ("21 Nov 2026"), for table columns; the full instant is in the title. */
export function dayTag(iso: string | null, timeZone: string, empty = '—'): SafeHtml {
  if (!iso) return html`<span class="muted">${empty}</span>`;
  const at = new Date(iso);
  return html`<time datetime="${iso}" title="${formatter(timeZone, true).format(at)}">${formatter(timeZone, false).format(at)}</time>`;
}

/** "3 minutes", "2 hours": how long a lockout still lasts. */
export function duration(ms: number): string {
  const minutes = Math.max(1, Math.ceil(ms / 60_000));
  return minutes < 60 ? plural(minutes, 'minute') : plural(Math.ceil(minutes / 60), 'hour');
}

/** Enum values (QUALIFIED, round_robin) as words. */
export function humanize(value: string): string {
  const words = value.replace(/[_-]+/g, ' ').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** "48,000.00 EUR": the exact decimal string grouped by thousands (never through a float, so nothing is rounded). */
export function money(amount: string | null, currency: string | null): string {
  if (amount === null) return '';
  const [integer, fraction] = amount.split('.') as [string, string | undefined];
  const grouped = integer.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${grouped}${fraction === undefined ? '' : `.${fraction}`}${currency ? ` ${currency}` : ''}`;
}

/** 'YYYY-MM-DDT00:00:00.000Z' (a date-only field as the API returns it) → '21 Nov 2026'. */
export function dayOnly(value: string | null, empty = '—'): SafeHtml {
  if (!value) return html`<span class="muted">${empty}</span>`;
  const day = value.slice(0, 10);
  return html`<time datetime="${day}">${formatter('UTC', false).format(new Date(`${day}T00:00:00.000Z`))}</time>`;
}
