import type { AppContext } from '../../context.js';
import { AppError } from '../../errors.js';
import { text, type FormBody, type FormProblem } from '../forms.js';
import { html, type SafeHtml } from '../html.js';

/*
 * Edit forms save against the version they were rendered from, as an API client does with If-Match (contract §8):
 * the form carries the item's ETag and the save passes it to the service as `ifMatch`. The forms of leads,
 * accounts, deals and records also send only the inputs whose text differs from the item as it is at save time —
 * which, when the tags agree, is the item the form showed. A change made meanwhile (through the API, in another
 * tab) makes the service answer 412, and the form comes back (409) with the current values instead of silently
 * overwriting them: every edit form does this through `editConflict`, told what it edits by an `EditedItem`.
 */

const VERSION = '_version';

/** The hidden input naming the version of the item the form shows: its ETag (the context's entity tagger), as GET answers it. */
export const versionField = (version: string | undefined): SafeHtml | '' => (version ? html`<input type="hidden" name="${VERSION}" value="${version}">` : '');

/**
 * The version a submitted edit form was rendered from, as the service's `ifMatch`. Every form the console renders
 * has one; a POST without one (a script's) is unconditional, as an API PATCH without If-Match is.
 */
export const submittedVersion = (body: FormBody): string | undefined => text(body, VERSION) || undefined;

/** The entries of `body` whose input text differs from the rendered version's (`before`): what the user changed. */
export function changedOnly(body: Record<string, unknown>, submitted: Readonly<Record<string, string>>, before: Readonly<Record<string, string>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([key]) => submitted[key] !== before[key]));
}

/** The current item a 412 carries (under `key`, as the API answers it), or undefined for any other error. */
export function conflictingItem<T>(err: unknown, key: string): T | undefined {
  return err instanceof AppError && err.code === 'PRECONDITION_FAILED' ? (err.data?.[key] as T | undefined) : undefined;
}

const QUOTE_MAX = 80;
const quoted = (value: string) => (value.trim() === '' ? '(empty)' : `“${value.length > QUOTE_MAX ? `${value.slice(0, QUOTE_MAX)}…` : value}”`);

/**
 * The form-level message of a 412: nothing was saved, the form now shows the current values, and what the
 * submitted form held where it differs from them — the user's edits, and the stale values of fields changed
 * meanwhile — so nothing typed is lost without a trace. An input either side lacks counts as empty (a row the
 * user added or emptied in a list of rows).
 */
function conflictProblem(
  noun: string,
  labels: Readonly<Record<string, string>>,
  submitted: Readonly<Record<string, string>>,
  current: Readonly<Record<string, string>>,
): FormProblem {
  const differences = [...new Set([...Object.keys(current), ...Object.keys(submitted)])]
    .filter((key) => (submitted[key] ?? '') !== (current[key] ?? ''))
    .map((key) => `${labels[key] ?? key}: ${quoted(submitted[key] ?? '')}`);
  const yours = differences.length ? ` Where your form differed from them, it had ${differences.join('; ')}.` : '';
  return {
    fields: {},
    message: `This ${noun} was changed by someone else since you opened it, so your changes were not saved. The form now shows the current values.${yours} Review them and save again.`,
  };
}

/** What an edit form edits: the item's name in a 412 (`key`) and in messages (`noun`), its inputs' labels and its form text. */
export interface EditedItem<T> {
  key: string;
  noun: string;
  labels: Readonly<Record<string, string>>;
  formOf(item: T): Record<string, string>;
}

/** A save refused because the item changed meanwhile: the item as it is now, its version, and the form-level message. */
export interface EditConflict<T> {
  item: T;
  version: string;
  problem: FormProblem;
}

/**
 * A save's error as a conflict over the edited item, or undefined for any other error. The form then comes back
 * (409) showing `item` under `version`, with `problem` quoting what the `submitted` form text held.
 */
export function editConflict<T>(
  ctx: Pick<AppContext, 'entityTagger'>,
  err: unknown,
  edited: EditedItem<T>,
  submitted: Readonly<Record<string, string>>,
): EditConflict<T> | undefined {
  const item = conflictingItem<T>(err, edited.key);
  if (item === undefined) return undefined;
  return { item, version: ctx.entityTagger.tagOf(item), problem: conflictProblem(edited.noun, edited.labels, submitted, edited.formOf(item)) };
}
