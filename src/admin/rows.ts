import { AppError, type FieldError } from '../errors.js';
import { text, type FieldMessages, type FormBody, type FormProblem } from './forms.js';

/*
 * Repeatable rows in a form that works without script: inputs are named `<list>.<i>.<key>` (the paths the
 * API reports errors at), a few blank rows follow the filled ones, and submit buttons named `_action` ask
 * for more rows or move a row, re-rendering the draft instead of saving it.
 */

export type Row<K extends string> = Record<K, string>;

/** The rows `<list>.0…` of a submitted form, in order, up to `max` (a forged form can't make us loop long). */
export function readRows<K extends string>(body: FormBody, list: string, keys: readonly K[], max: number): Row<K>[] {
  const rows: Row<K>[] = [];
  for (let i = 0; i < max; i++) {
    if (!keys.some((k) => body[`${list}.${i}.${k}`] !== undefined)) break;
    rows.push(Object.fromEntries(keys.map((k) => [k, text(body, `${list}.${i}.${k}`)])) as Row<K>);
  }
  return rows;
}

/** The rows the user filled (some of `significant` non-blank), with each one's position in the form. */
export function filledRows<K extends string>(rows: readonly Row<K>[], significant: readonly NoInfer<K>[]): { row: Row<K>; at: number }[] {
  return rows.flatMap((row, at) => (significant.some((k) => row[k].trim() !== '') ? [{ row, at }] : []));
}

/** What a submit button asked for: save, more rows, or moving row `index` up or down. */
export type RowAction = { kind: 'save' } | { kind: 'more'; list: string } | { kind: 'move'; list: string; index: number; by: -1 | 1 };

export function rowAction(body: FormBody): RowAction {
  const value = text(body, '_action');
  const more = /^more:([a-z]+)$/.exec(value);
  if (more) return { kind: 'more', list: more[1]! };
  const move = /^(up|down):([a-z]+):(\d{1,3})$/.exec(value);
  if (move) return { kind: 'move', list: move[2]!, index: Number(move[3]), by: move[1] === 'up' ? -1 : 1 };
  return { kind: 'save' };
}

/** The rows with row `index` swapped with its neighbour (nothing happens at either end). */
export function moveRow<T>(rows: readonly T[], index: number, by: -1 | 1): T[] {
  const out = [...rows];
  const to = index + by;
  if (index < 0 || index >= out.length || to < 0 || to >= out.length) return out;
  [out[index], out[to]] = [out[to]!, out[index]!];
  return out;
}

/** `rows` followed by blank rows up to `blank` of them (at least one blank row is always offered). */
export function withBlankRows<K extends string>(rows: readonly Row<K>[], keys: readonly K[], blank: number, defaults: Partial<Row<K>> = {}): Row<K>[] {
  const empty = () => ({ ...(Object.fromEntries(keys.map((k) => [k, ''])) as Row<K>), ...defaults });
  return [...rows, ...Array.from({ length: blank }, empty)];
}

/**
 * A service's refusal as messages on the form: `<list>.<n>.<key>` paths name the n-th *filled* row, which
 * `positions` maps back to its place in the form; errors about a list as a whole stay on the list. A
 * CONFLICT's own message (e.g. stages still used by deals) heads the summary.
 */
export function rowProblem(err: unknown, positions: Readonly<Record<string, readonly number[]>>): FormProblem {
  if (!(err instanceof AppError) || err.status >= 500) throw err;
  const fields: FieldMessages = {};
  const add = (field: string, message: string) => (fields[field] = fields[field] ? `${fields[field]}; ${message}` : message);
  for (const e of err.errors ?? ([] as FieldError[])) {
    // `fields.2.options.0` belongs to the input `fields.2.options`.
    const m = /^([a-z]+)\.(\d+)(\.[A-Za-z]+)?/.exec(e.field);
    const at = m ? positions[m[1]!]?.[Number(m[2])] : undefined;
    add(m && at !== undefined ? `${m[1]}.${at}${m[3] ?? ''}` : e.field, e.message);
  }
  return err.code === 'VALIDATION_FAILED' && err.errors?.length ? { fields } : { fields, message: err.message };
}
