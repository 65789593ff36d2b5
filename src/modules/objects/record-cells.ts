import type { Field } from './definition.js';

/** CSV cells are text: numbers and booleans become JSON values so the definition's type checks apply as in the API. */
function cellValue(field: Field | undefined, cell: string): unknown {
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
