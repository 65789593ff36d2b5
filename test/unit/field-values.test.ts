import { describe, expect, it } from 'vitest';
import type { Field } from '../../src/modules/objects/definition.js';
import { parseFieldValue, parseInstant, presentFieldValue } from '../../src/modules/objects/field-values.js';

const field = (type: Field['type'], extra: Partial<Field> = {}): Field => ({ key: 'f', label: 'F', type, required: false, ...extra });
const value = (f: Field, v: unknown) => {
  const r = parseFieldValue(f, v);
  return r.ok ? r.value : r.code;
};

describe('parseInstant', () => {
  it('converts instants with Z or an offset to UTC with milliseconds', () => {
    expect(parseInstant('2026-03-01T10:00:00Z')).toBe('2026-03-01T10:00:00.000Z');
    expect(parseInstant('2026-03-01t10:00:00z')).toBe('2026-03-01T10:00:00.000Z');
    expect(parseInstant('2026-03-01T10:00Z')).toBe('2026-03-01T10:00:00.000Z');
    expect(parseInstant('2026-03-01T00:30:00+01:00')).toBe('2026-02-28T23:30:00.000Z');
    expect(parseInstant('2024-02-29T23:00:00-02:00')).toBe('2024-03-01T01:00:00.000Z');
    expect(parseInstant('2026-03-01T10:00:00.1-0530')).toBe('2026-03-01T15:30:00.100Z');
    expect(parseInstant('2026-03-01T10:00:00.987654+05')).toBe('2026-03-01T05:00:00.987Z');
    expect(parseInstant('0050-06-01T00:00:00Z')).toBe('0050-06-01T00:00:00.000Z');
  });

  it('refuses what names no instant', () => {
    for (const bad of ['2026-03-01T10:00:00', '2026-03-01', '2026-02-29T10:00:00Z', '2026-04-31T10:00:00Z', '2026-03-01T24:00:00Z', '2026-03-01T10:60:00Z', '2026-03-01T10:00:60Z', '2026-03-01T10:00:00+24:00', '2026-03-01T10:00:00+01:60', '0001-01-01T00:00:00+01:00', '9999-12-31T23:00:00-02:00', ' 2026-03-01T10:00:00Z', 'x'.repeat(100)]) {
      expect(parseInstant(bad), bad).toBeNull();
    }
  });
});

describe('parseFieldValue', () => {
  it('reads a (multi) select option in any Unicode spelling as the option the definition lists', () => {
    const precomposed = 'Caf\u00e9';
    const combining = 'Cafe\u0301';
    expect(value(field('select', { options: [precomposed, 'Bar'] }), combining)).toBe(precomposed);
    expect(value(field('multi_select', { options: ['Bar', precomposed] }), [combining, 'Bar'])).toEqual(['Bar', precomposed]);
    expect(value(field('multi_select', { options: [precomposed] }), [combining, precomposed])).toBe('duplicate');
    expect(value(field('select', { options: [precomposed] }), 'Cafe')).toBe('invalid_value');
  });

  it('checks types without coercion', () => {
    expect(value(field('number'), 1.5)).toBe(1.5);
    expect(value(field('number'), '1')).toBe('invalid_type');
    expect(value(field('boolean'), false)).toBe(false);
    expect(value(field('boolean'), 0)).toBe('invalid_type');
    expect(value(field('text'), 5)).toBe('invalid_type');
    expect(value(field('date'), 20260301)).toBe('invalid_type');
  });

  it('refuses numbers past ±2^53, where JSON no longer holds every integer', () => {
    expect(value(field('number'), Number.MAX_SAFE_INTEGER)).toBe(Number.MAX_SAFE_INTEGER);
    expect(value(field('number'), -Number.MAX_SAFE_INTEGER)).toBe(-Number.MAX_SAFE_INTEGER);
    expect(value(field('number'), JSON.parse('9007199254740993'))).toBe('too_precise');
    expect(value(field('number'), -1e300)).toBe('too_precise');
    expect(value(field('number'), 0.30000000000000004)).toBe(0.30000000000000004);
  });

  it('normalizes contacts, dates and checks options, urls and lengths', () => {
    expect(value(field('email'), ' A@B.example ')).toBe('a@b.example');
    expect(value(field('email'), 'a@b')).toBe('invalid_format');
    expect(value(field('phone'), '+1 (415) 555-0100')).toBe('+14155550100');
    expect(value(field('phone'), '4155550100')).toBe('invalid_format');
    expect(value(field('date'), '2026-03-01T12:00:00Z')).toBe('2026-03-02');
    expect(value(field('date'), '2026-02-29')).toBe('invalid_date');
    expect(value(field('select', { options: ['a', 'b'] }), 'b')).toBe('b');
    expect(value(field('select', { options: ['a', 'b'] }), 'B')).toBe('invalid_value');
    expect(value(field('url'), 'https://example.com/x')).toBe('https://example.com/x');
    for (const bad of ['example.com', 'javascript:alert(1)', 'mailto:a@b.c', `https://e.com/${'x'.repeat(2048)}`]) expect(value(field('url'), bad), bad).toBe('invalid_format');
    expect(value(field('text'), 'x'.repeat(1000))).toHaveLength(1000);
    expect(value(field('text'), 'x'.repeat(1001))).toBe('too_long');
    expect(value(field('text', { required: true }), ' \n ')).toBe('required');
    expect(value(field('text'), '')).toBe('');
  });

  it('reads date-only values back as midnight UTC', () => {
    expect(presentFieldValue(field('date'), '2026-03-02')).toBe('2026-03-02T00:00:00.000Z');
    expect(presentFieldValue(field('number'), 3)).toBe(3);
  });
});
