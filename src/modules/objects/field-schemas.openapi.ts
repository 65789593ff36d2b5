import type { Field } from './definition.js';
import { MAX_LONG_TEXT, MAX_TEXT } from './field-values.js';
import { isRanged, RANGE_OPERATORS } from './record-filters.js';
import { isFilterable } from './record-values.js';

/** Field values and filters in OpenAPI, for records' typed paths and the built-in resources' custom fields alike. */

type Schema = Record<string, unknown>;

export const nullable = (s: Schema): Schema => ({ anyOf: [s, { type: 'null' }] });

/** The JSON Schema of a field's value as records return it ('read') or as bodies send it ('write'). */
export function valueSchema(field: Field, mode: 'read' | 'write'): Schema {
  const described = (s: Schema) => ({ ...s, title: field.label });
  switch (field.type) {
    case 'text': return described({ type: 'string', maxLength: MAX_TEXT });
    case 'long_text': return described({ type: 'string', maxLength: MAX_LONG_TEXT });
    case 'number': return described({ type: 'number' });
    case 'boolean': return described({ type: 'boolean' });
    case 'date':
      return mode === 'read'
        ? described({ type: 'string', format: 'date-time', description: 'Date-only: YYYY-MM-DDT00:00:00.000Z.' })
        : described({ type: 'string', description: 'YYYY-MM-DD; a timestamp with an offset is kept as its nearest UTC day.', examples: ['2026-11-21'] });
    case 'datetime': return described({ type: 'string', format: 'date-time', description: mode === 'read' ? 'UTC instant.' : 'ISO 8601 instant with Z or an offset.' });
    case 'select': return described({ type: 'string', enum: field.options ?? [] });
    case 'email': return described({ type: 'string', format: 'email' });
    case 'phone': return described({ type: 'string', description: 'International format with the country code; returned as E.164.' });
    case 'url': return described({ type: 'string', format: 'uri' });
  }
}

/** The `filter[…]` parameters of a list for a definition's fields (contract §8). */
export function filterParameters(fields: readonly Field[], noun: string): Schema[] {
  return fields.filter(isFilterable).flatMap((f) => {
    const value = f.type === 'select' ? { type: 'string', enum: f.options ?? [] } : f.type === 'boolean' ? { type: 'boolean' } : f.type === 'number' ? { type: 'number' } : { type: 'string' };
    const eq = { in: 'query', name: `filter[${f.key}]`, required: false, schema: value, description: `Only ${noun} whose ${f.label} equals this value.` };
    const ranges = isRanged(f)
      ? RANGE_OPERATORS.map((op) => ({ in: 'query', name: `filter[${f.key}][${op}]`, required: false, schema: value, description: `Only ${noun} whose ${f.label} is ${op} this value.` }))
      : [];
    return [eq, ...ranges];
  });
}

