import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { validateValue } from '../../src/http/validation.js';

/** The messages a client reads in `errors[].message`: each says its rule once, in plain words. */
describe('validation messages', () => {
  it('states a numeric bound once ("must be <= 100", not "must be must be <= 100")', () => {
    const limit = Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 100 }), ratio: Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 }) });
    expect(validateValue(limit, { limit: 500, ratio: 1 }, 'query')).toEqual([
      { field: 'limit', code: 'out_of_range', message: 'must be <= 100' },
      { field: 'ratio', code: 'out_of_range', message: 'must be < 1' },
    ]);
    expect(validateValue(limit, { limit: 0, ratio: 0 }, 'query').map((e) => e.message)).toEqual(['must be >= 1', 'must be > 0']);
  });
});
