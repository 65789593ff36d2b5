import type { Field } from './definition.js';

/** A multi_select as one text cell (CSV import, console forms): its options joined by `;`. */
export const OPTION_SEPARATOR = ';';
export const splitOptions = (cell: string): string[] => cell.split(OPTION_SEPARATOR).map((o) => o.trim()).filter((o) => o !== '');
export const joinOptions = (options: readonly string[]): string => options.join(OPTION_SEPARATOR);

/**
 * CSV cells are text: numbers and booleans become JSON values, a multi_select cell its `;`-separated options,
 * so the definition's type checks apply as in the API. A relation cell is the target's id as it is.
 */
function cellValue(field: Field | undefined, cell: string): unknown {
  if (field?.type === 'multi_select') return splitOptions(cell);
  if (field?.type === 'number') return /^\s*-?\d+(\.\d+)?([eE][+-]?\d+)?\s*$/.test(cell) ? Number(cell) : cell;
  if (field?.type === 'boolean') {
    const value = cell.trim().toLowerCase();
    if (['true', 'yes', '1'].includes(value)) return true;
    if (['false', 'no', '0'].includes(value)) return false;
  }
  return cell;
}

/** The record input of a CSV row of an object with these fields (columns are field keys, and `stage`). */
export function recordFromCells(fields: readonly Field[]): (cells: Record<string, string>) => Record<string, unknown> {
  const byKey = new Map(fields.map((f) => [f.key, f]));
  return (cells) => Object.fromEntries(Object.entries(cells).map(([key, cell]) => [key, cellValue(byKey.get(key), cell)]));
}
