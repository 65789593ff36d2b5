import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizeCurrency, parseAmount } from '../../src/lib/money.js';

const value = (input: unknown) => {
  const r = parseAmount(input);
  return r.ok ? r.value : `error:${r.code}`;
};

describe('parseAmount: decimal strings', () => {
  it('keeps the sent scale and drops only leading zeros of the integer part', () => {
    expect(value('1234.50')).toBe('1234.50');
    expect(value('1234.5')).toBe('1234.5');
    expect(value('0.1')).toBe('0.1');
    expect(value('0.0000')).toBe('0.0000');
    expect(value('007.25')).toBe('7.25');
    expect(value('000')).toBe('0');
    expect(value(' 42 ')).toBe('42');
  });

  it('takes 15 integer digits and 4 decimals, no more', () => {
    expect(value('999999999999999.9999')).toBe('999999999999999.9999');
    expect(value('0000999999999999999')).toBe('999999999999999');
    expect(value('1000000000000000')).toBe('error:out_of_range');
    expect(value('1.23456')).toBe('error:too_precise');
  });

  it('refuses negatives and anything that is not plain decimal notation', () => {
    expect(value('-1')).toBe('error:out_of_range');
    expect(value('-0.5')).toBe('error:out_of_range');
    for (const bad of ['', '.5', '5.', '1e3', '+1', '1,000.00', '1 000', 'NaN', 'Infinity', '0x10', '١٢٣', '1.2.3', '--1']) {
      expect(value(bad), bad).toBe('error:invalid_format');
    }
  });

  it('round-trips every valid decimal string exactly (property)', () => {
    const digits = (min: number, max: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max });
    fc.assert(
      fc.property(digits(1, 15), fc.option(digits(1, 4), { nil: undefined }), (int, frac) => {
        const sent = frac === undefined ? int : `${int}.${frac}`;
        const canonicalInt = int.replace(/^0+(?=\d)/, '');
        expect(value(sent)).toBe(frac === undefined ? canonicalInt : `${canonicalInt}.${frac}`);
      }),
    );
  });
});

describe('parseAmount: JSON numbers', () => {
  it('writes numbers in their shortest exact form, with no float drift', () => {
    expect(value(0.1)).toBe('0.1');
    expect(value(1.5)).toBe('1.5');
    expect(value(1234.56)).toBe('1234.56');
    expect(value(0)).toBe('0');
    expect(value(-0)).toBe('0');
    expect(value(0.0001)).toBe('0.0001');
    expect(value(100)).toBe('100');
    expect(value(999999999999999)).toBe('999999999999999');
    expect(value(12345678901.2345)).toBe('12345678901.2345');
  });

  it('refuses numbers a double cannot carry exactly, and out-of-range ones', () => {
    expect(value(0.1 + 0.2)).toBe('error:too_precise');
    expect(value(1e21)).toBe('error:out_of_range');
    expect(value(1e15)).toBe('error:out_of_range');
    expect(value(0.00001)).toBe('error:too_precise');
    expect(value(-3)).toBe('error:out_of_range');
    expect(value(Number.NaN)).toBe('error:invalid_type');
    expect(value(Number.POSITIVE_INFINITY)).toBe('error:invalid_type');
    expect(value(true)).toBe('error:invalid_type');
  });

  it('maps every number of up to 15 significant digits to the decimal it was written as (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 99_999_999_999_999 }), fc.integer({ min: 0, max: 4 }), (units, scale) => {
        const text = (units / 10 ** scale).toFixed(scale);
        const expected = scale === 0 ? text : text.replace(/\.?0+$/, '');
        expect(value(Number(text))).toBe(expected);
      }),
    );
  });
});

describe('normalizeCurrency', () => {
  it('accepts ISO 4217 codes in any case and refuses the rest', () => {
    expect(normalizeCurrency('EUR')).toBe('EUR');
    expect(normalizeCurrency('usd')).toBe('USD');
    expect(normalizeCurrency('jPy')).toBe('JPY');
    for (const bad of ['XYZ', 'EU', 'EURO', '', '€', 'U$D']) expect(normalizeCurrency(bad), bad).toBeNull();
  });
});
