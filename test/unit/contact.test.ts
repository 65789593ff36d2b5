import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isEmail, normalizeEmail, normalizePhone, phoneQuery } from '../../src/lib/contact.js';
import { sanitizeUrl } from '../../src/http/logging.js';
import { canonicalJson } from '../../src/lib/canonical-json.js';

describe('phone normalization (libphonenumber)', () => {
  it.each([
    ['+1 415 555 0100', '+14155550100'],
    ['+1 (415) 555-0100', '+14155550100'],
    ['+44 20 7946 0958', '+442079460958'],
    ['0033 1 42 68 53 00', '+33142685300'],
    ['+49 30 901820', '+4930901820'],
    ['  +33 6 12 34 56 78  ', '+33612345678'],
  ])('%s → %s', (input, e164) => {
    expect(normalizePhone(input)).toEqual({ ok: true, e164 });
  });

  it('refuses a number without a country code, saying to add it', () => {
    const r = normalizePhone('415 555 0100');
    expect(r.ok).toBe(false);
    expect(!r.ok && r.message).toMatch(/country code/);
  });

  it('refuses invalid numbers and garbage', () => {
    for (const bad of ['+1 555', '+999 123456', '+', 'abc', '']) expect(normalizePhone(bad).ok, bad).toBe(false);
  });

  it('runs on the patched libphonenumber-js (patches/: compiled patterns kept, not rebuilt per test)', () => {
    const installed = readFileSync(fileURLToPath(import.meta.resolve('libphonenumber-js/max')).replace(/max[\\/]index\.js$/, 'es6/helpers/matchesEntirely.js'), 'utf8');
    expect(installed).toContain('compiled.get(regularExpressionText)');
  });

  it('gives the same verdicts with its pattern cache warm as cold, in any order (property)', () => {
    const numbers = ['+1 415 555 0100', '+1 800 555 0100', '+1 242 357 1234', '+1 555 0100', '+44 20 7946 0958', '+44 7911 123456', '+33 6 12 34 56 78', '+49 30 901820', '+81 3 1234 5678', '+999 123456'];
    const cold = numbers.map((n) => normalizePhone(n));
    fc.assert(fc.property(fc.shuffledSubarray(numbers.map((n, i) => [n, i] as const)), (sample) => {
      for (const [n, i] of sample) expect(normalizePhone(` ${n}`)).toEqual(cold[i]);
    }));
  });

  it('is idempotent: a normalized number normalizes to itself (property)', () => {
    fc.assert(fc.property(fc.stringMatching(/^\+[1-9][0-9 ()-]{6,16}$/), (input) => {
      const first = normalizePhone(input);
      if (first.ok) expect(normalizePhone(first.e164)).toEqual(first);
    }));
  });

  it('phoneQuery only treats +/00-prefixed numbers as phone lookups', () => {
    expect(phoneQuery('+14155550100')).toBe('+14155550100');
    expect(phoneQuery('4155550100')).toBeNull();
    expect(phoneQuery('Grace')).toBeNull();
  });
});

describe('e-mail', () => {
  it('accepts ordinary addresses and normalizes case and spaces', () => {
    expect(isEmail(' Ada.Lovelace+crm@Example.co.uk ')).toBe(true);
    expect(normalizeEmail(' Ada@Example.COM ')).toBe('ada@example.com');
  });
  it('refuses malformed addresses', () => {
    for (const bad of ['ada', 'ada@', '@example.com', 'ada@example', 'a b@example.com', 'ada@@example.com', 'ada@-example.com', `${'a'.repeat(250)}@example.com`]) {
      expect(isEmail(bad), bad).toBe(false);
    }
  });
});

describe('helpers', () => {
  it('sanitizeUrl never logs query values', () => {
    expect(sanitizeUrl('/api/public/v1/leads?q=ada%40example.com&page=2')).toBe('/api/public/v1/leads?q=[redacted]&page=[redacted]');
    expect(sanitizeUrl('/health')).toBe('/health');
  });

  it('sanitizeUrl keeps ids, static segments and slugs of a path, and redacts every other segment', () => {
    const id = '65f0c0ffee0123456789abcd';
    for (const safe of [`/api/public/v1/leads/${id}`, '/api/public/v1/objects/deal_notes2/records/', '/openapi.json', '/admin/assets/admin.css', '/docs/static/favicon-32x32.png', '/']) {
      expect(sanitizeUrl(safe)).toBe(safe);
    }
    const unsafe = ['ada@example.com', 'ada%40example.com', '%2B14155550100', '14155550100', 'tel14155550100', `crm_live_${'Ab1'.repeat(10)}xy`, 'Ada', `${id}0`, 'x'.repeat(65), '..', 'john.doe'];
    for (const segment of unsafe) expect(sanitizeUrl(`/api/public/v1/leads/${segment}/restore?q=1`), segment).toBe('/api/public/v1/leads/[redacted]/restore?q=[redacted]');
  });
  it('canonicalJson is independent of key order (property)', () => {
    fc.assert(fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (obj) => {
      const reversed = Object.fromEntries(Object.entries(obj).reverse());
      expect(canonicalJson(reversed)).toBe(canonicalJson(obj));
    }));
  });
});
