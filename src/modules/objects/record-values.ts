import type { BlindIndex } from '../../crypto/blind-index.js';
import type { Definition, Field } from './definition.js';

/**
 * The filterable values of a record (contract §8 `filter[field]`), one row per set field in the shared
 * `record_values` table (migration 0016): numbers and booleans as a number, dates, datetimes, selects,
 * relations (the target's id) and texts as text, e-mails and phones as their blind index (they are encrypted
 * in the record's data), a multi_select as one row per option (`position`, migration 0020). One
 * table for every object keeps SQLite's schema from growing with objects (issue 14), and its two composite
 * indexes answer an equality or range on any field of any object from one index range.
 */

export type FilterableType = 'number' | 'boolean' | 'date' | 'datetime' | 'select' | 'multi_select' | 'relation' | 'text' | 'email' | 'phone';
const FILTERABLE = new Set<string>(['number', 'boolean', 'date', 'datetime', 'select', 'multi_select', 'relation', 'text', 'email', 'phone']);

export const isFilterable = (f: Field): f is Field & { type: FilterableType } => FILTERABLE.has(f.type);

/** Text values are indexed by their first characters (long keys stay below PostgreSQL's b-tree entry limit); equality rechecks the whole value. */
export const TEXT_PREFIX = 200;

export interface IndexedValue {
  fieldKey: string;
  /** 0, or the option's place among a multi_select's values (the row key is record, field, position). */
  position: number;
  numValue: number | null;
  textValue: string | null;
}

/**
 * The indexed values of a record whose data is given in clear (e-mails and phones not yet encrypted). Without
 * a blind index (a migration holds no keys) contact fields are left out.
 */
export function indexedValues(definition: Definition, clear: Record<string, unknown>, contacts?: { blindIndex: BlindIndex; organizationId: string }): IndexedValue[] {
  return definition.fields.filter(isFilterable).flatMap((f): IndexedValue[] => {
    const v = clear[f.key];
    if (v === undefined || v === null) return [];
    const one = (numValue: number | null, textValue: string | null): IndexedValue[] => [{ fieldKey: f.key, position: 0, numValue, textValue }];
    switch (f.type) {
      case 'number':
        return typeof v === 'number' ? one(v, null) : [];
      case 'boolean':
        return typeof v === 'boolean' ? one(v ? 1 : 0, null) : [];
      case 'email':
      case 'phone':
        return contacts && typeof v === 'string' ? one(null, contacts.blindIndex.compute(f.type, contacts.organizationId, v)) : [];
      case 'multi_select':
        return Array.isArray(v) ? v.map((option, position) => ({ fieldKey: f.key, position, numValue: null, textValue: String(option) })) : [];
      default:
        return typeof v === 'string' ? one(null, v.slice(0, TEXT_PREFIX)) : [];
    }
  });
}
