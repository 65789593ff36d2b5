/**
 * Deal amounts are exact decimals kept as text: at most 15 integer digits and 4 fractional digits, ≥ 0.
 * A decimal string keeps the scale it was sent with ("1234.50" stays "1234.50"; only leading zeros of the
 * integer part go). A JSON number has already become a binary double by the time it reaches us, so it is
 * accepted only when that is lossless — at most 15 significant digits, where every decimal maps to a double
 * whose shortest form is that same decimal — and written in that shortest form (0.1 → "0.1", 1.50 → "1.5").
 */
export const MAX_INTEGER_DIGITS = 15;
export const MAX_FRACTION_DIGITS = 4;
// IEEE-754 doubles round-trip every decimal of up to 15 significant digits (DBL_DIG).
const EXACT_DOUBLE_DIGITS = 15;

export type AmountResult = { ok: true; value: string } | { ok: false; code: string; reason: string };

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

function fromDecimalText(text: string): AmountResult {
  if (/^-\d/.test(text)) return { ok: false, code: 'out_of_range', reason: 'must be zero or more' };
  const m = DECIMAL.exec(text);
  if (!m) return { ok: false, code: 'invalid_format', reason: 'must be a decimal number such as "1234.50" (digits, an optional "." and up to 4 decimals)' };
  const integer = m[1]!.replace(/^0+(?=\d)/, '');
  const fraction = m[2];
  if (integer.length > MAX_INTEGER_DIGITS) return { ok: false, code: 'out_of_range', reason: `must have at most ${MAX_INTEGER_DIGITS} digits before the decimal point` };
  if (fraction !== undefined && fraction.length > MAX_FRACTION_DIGITS) return { ok: false, code: 'too_precise', reason: `must have at most ${MAX_FRACTION_DIGITS} decimals` };
  return { ok: true, value: fraction === undefined ? integer : `${integer}.${fraction}` };
}

/** "1.5e-7" / "1e+21" (Number#toString's exponent form) → plain decimal digits. */
function expandExponent(text: string): string {
  const [mantissa, exp] = text.split('e') as [string, string | undefined];
  if (exp === undefined) return text;
  const [int, frac = ''] = mantissa.split('.') as [string, string | undefined];
  const digits = int + frac;
  const point = int.length + Number(exp);
  if (point <= 0) return `0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return digits + '0'.repeat(point - digits.length);
  return `${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** Digits from the first to the last non-zero one: trailing zeros of 1500 or 1e15 are magnitude, always exact. */
function significantDigits(shortest: string): number {
  const mantissa = shortest.split('e')[0]!.replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  return Math.max(mantissa.length, 1);
}

/** Parses an amount sent as a JSON number or a decimal string into its canonical stored text. */
export function parseAmount(input: unknown): AmountResult {
  if (typeof input === 'string') return fromDecimalText(input.trim());
  if (typeof input !== 'number' || !Number.isFinite(input)) return { ok: false, code: 'invalid_type', reason: 'must be a decimal string or a number' };
  if (input < 0) return { ok: false, code: 'out_of_range', reason: 'must be zero or more' };
  const shortest = String(input === 0 ? 0 : input);
  if (significantDigits(shortest) > EXACT_DOUBLE_DIGITS) {
    return { ok: false, code: 'too_precise', reason: `has more than ${EXACT_DOUBLE_DIGITS} significant digits, which a JSON number can't carry exactly; send it as a decimal string` };
  }
  return fromDecimalText(expandExponent(shortest));
}

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

/** An ISO 4217 code the runtime knows ("usd" → "USD"), or null. */
export function normalizeCurrency(input: string): string | null {
  const code = input.trim().toUpperCase();
  return /^[A-Z]{3}$/.test(code) && CURRENCIES.has(code) ? code : null;
}
