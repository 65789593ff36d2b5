import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validateValue } from '../../src/http/validation.js';
import { definitionErrors, PROTOTYPE_KEYS, type Field } from '../../src/modules/objects/definition.js';
import { FieldDefinition, RESERVED_KEYS } from '../../src/modules/objects/objects.schemas.js';

const field = (key: string): Field => ({ key, label: key, type: 'text', required: false });
/** Every problem with a key, from the request schema (pattern) and from the definition rules. */
const keyErrors = (key: string, existing: string[] = []) => [
  ...validateValue(FieldDefinition, { key, label: 'L', type: 'text' }, 'field'),
  ...definitionErrors({ fields: [field(key)], stages: [] }, new Set(existing)),
];
const reserved = (key: string) => (RESERVED_KEYS as readonly string[]).includes(key) || PROTOTYPE_KEYS.has(key);

describe('field keys', () => {
  it('accepts camelCase and snake_case', () => {
    for (const key of ['visitDate', 'linkedinUrl', 'due_on', 'a', 'x1_Y2']) expect(keyErrors(key), key).toEqual([]);
  });

  it('refuses every name on Object.prototype with a message that says why', () => {
    for (const key of ['constructor', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', 'propertyIsEnumerable', 'toLocaleString', '__proto__']) {
      expect(keyErrors(key).length, key).toBeGreaterThan(0);
    }
    expect(keyErrors('constructor')).toEqual([{ field: 'fields.0.key', code: 'reserved', message: expect.stringMatching(/every JavaScript object has/) }]);
  });

  it('keeps a prototype-named key an existing definition already has', () => {
    expect(keyErrors('constructor', ['constructor'])).toEqual([]);
  });

  it('property: a key is accepted exactly when it matches ^[a-z][a-zA-Z0-9_]{0,49}$ and is neither reserved nor a prototype name', () => {
    const candidate = fc.oneof(
      fc.stringMatching(/^[a-z][a-zA-Z0-9_]{0,49}$/),
      fc.constantFrom(...PROTOTYPE_KEYS, ...RESERVED_KEYS),
      fc.string({ maxLength: 60 }),
    );
    fc.assert(
      fc.property(candidate, (key) => {
        const valid = /^[a-z][a-zA-Z0-9_]{0,49}$/.test(key) && !reserved(key);
        expect(keyErrors(key).length === 0).toBe(valid);
      }),
      { numRuns: 500 },
    );
  });
});
