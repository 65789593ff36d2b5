import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { definitionErrors, diffDefinitions, type Field } from '../../src/modules/objects/definition.js';
import { parseFieldValue } from '../../src/modules/objects/field-values.js';
import { splitOptions } from '../../src/modules/objects/record-cells.js';
import { parseRecordInput } from '../../src/modules/objects/record-input.js';
import { indexedValues } from '../../src/modules/objects/record-values.js';

const OPTIONS = ['red', 'green', 'blue', 'cyan', 'magenta'];
const multi: Field = { key: 'tags', label: 'Tags', type: 'multi_select', required: false, options: OPTIONS };
const relation: Field = { key: 'lead', label: 'Lead', type: 'relation', required: false, target: 'leads' };
const parsed = (f: Field, v: unknown) => {
  const r = parseFieldValue(f, v);
  return r.ok ? r.value : r.code;
};

describe('multi_select values', () => {
  it('normalises any order of distinct options to the field\'s order, idempotently', () => {
    fc.assert(
      fc.property(fc.shuffledSubarray(OPTIONS), (sent) => {
        const stored = parsed(multi, sent);
        expect(stored).toEqual(OPTIONS.filter((o) => sent.includes(o)));
        expect(parsed(multi, stored)).toEqual(stored);
        expect(parsed(multi, [...sent].reverse())).toEqual(stored);
      }),
    );
  });

  it('refuses a repeated option, whatever else is sent', () => {
    fc.assert(
      fc.property(fc.shuffledSubarray(OPTIONS, { minLength: 1 }), fc.nat(), (sent, i) => {
        expect(parsed(multi, [...sent, sent[i % sent.length]!])).toBe('duplicate');
      }),
    );
  });

  it('refuses anything but an array of the field\'s options', () => {
    expect(parsed(multi, 'red')).toBe('invalid_type');
    expect(parsed(multi, [1])).toBe('invalid_type');
    expect(parsed(multi, ['Red'])).toBe('invalid_value');
    expect(parsed(multi, [])).toEqual([]);
  });

  it('indexes one row per option, positions in order', () => {
    expect(indexedValues({ fields: [multi], stages: [] }, { tags: ['red', 'blue'] })).toEqual([
      { fieldKey: 'tags', position: 0, numValue: null, textValue: 'red' },
      { fieldKey: 'tags', position: 1, numValue: null, textValue: 'blue' },
    ]);
  });

  it('an empty array clears an optional field and is missing on a required one', () => {
    expect(parseRecordInput({ fields: [multi], stages: [] }, { tags: [] }, 'update').values.get('tags')).toBeNull();
    expect(parseRecordInput({ fields: [{ ...multi, required: true }], stages: [] }, { tags: [] }, 'create').errors).toEqual([{ field: 'tags', code: 'required', message: 'is required' }]);
  });

  it('reads a CSV cell as its ;-separated options', () => {
    expect(splitOptions(' red; blue ;;')).toEqual(['red', 'blue']);
    expect(splitOptions('')).toEqual([]);
  });
});

describe('relation values', () => {
  it('take an id, never echoed', () => {
    expect(parsed(relation, '0123456789abcdef01234567')).toBe('0123456789abcdef01234567');
    const bad = parseFieldValue(relation, 'not-an-id');
    expect(bad).toEqual({ ok: false, code: 'invalid_format', message: 'must be the id of a lead' });
    expect(parsed(relation, 7)).toBe('invalid_type');
  });

  it('definitions need a target exactly on relations; a new target is a retype', () => {
    const errors = definitionErrors({ fields: [{ ...relation, target: undefined } as Field, { key: 'n', label: 'N', type: 'text', required: false, target: 'leads' }], stages: [] });
    expect(errors.map((e) => `${e.field}:${e.code}`)).toEqual(['fields.0.target:required', 'fields.1.target:not_allowed']);
    const change = diffDefinitions({ fields: [relation], stages: [] }, { fields: [{ ...relation, target: 'accounts' }], stages: [] });
    expect(change.retypedFields).toHaveLength(1);
  });
});
