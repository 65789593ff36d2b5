import { hasOptions, type Field } from './definition.js';
import { MAX_LONG_TEXT, MAX_TEXT, targetName } from './field-values.js';
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
    case 'multi_select':
      return described({ type: 'array', items: { type: 'string', enum: field.options ?? [] }, uniqueItems: true, description: 'Distinct options, returned in the order the field lists them; [] clears like null.' });
    case 'relation':
      return described({ type: 'string', pattern: '^[0-9a-f]{24}$', description: `The id of ${targetName(field.target)} (\`${field.target ?? ''}\`) of this organization, live when written; kept when that item is later trashed, purged or erased.` });
  }
}

function filterDescription(f: Field, noun: string): string {
  if (f.type === 'multi_select') return `Only ${noun} whose ${f.label} holds this option.`;
  if (f.type === 'relation') return `Only ${noun} whose ${f.label} points at this ${targetName(f.target).replace(/^an? /, '')} id (a reverse lookup).`;
  return `Only ${noun} whose ${f.label} equals this value.`;
}

/** The `filter[…]` parameters of a list for a definition's fields (contract §8). */
export function filterParameters(fields: readonly Field[], noun: string): Schema[] {
  return fields.filter(isFilterable).flatMap((f) => {
    const value = hasOptions(f) ? { type: 'string', enum: f.options ?? [] } : f.type === 'boolean' ? { type: 'boolean' } : f.type === 'number' ? { type: 'number' } : { type: 'string' };
    const eq = { in: 'query', name: `filter[${f.key}]`, required: false, schema: value, description: filterDescription(f, noun) };
    const ranges = isRanged(f)
      ? RANGE_OPERATORS.map((op) => ({ in: 'query', name: `filter[${f.key}][${op}]`, required: false, schema: value, description: `Only ${noun} whose ${f.label} is ${op} this value.` }))
      : [];
    return [eq, ...ranges];
  });
}

