import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { DateTime } from 'luxon';
import {
  addDays,
  formatDateOnly,
  isValidTimeZone,
  listTimeZones,
  localDate,
  parseDateOnly,
  zonedDateTimeToUtc,
} from '../../src/lib/dates.js';

const HOUR_MS = 3_600_000;
const ok = (value: string) => ({ ok: true, value });
const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
const iso = (d: Date): string => d.toISOString();

// Independent oracle for valid days: JS Date's own calendar, over the whole supported range.
const anyDay = fc
  .date({ min: new Date('0001-01-01T00:00:00.000Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true })
  .map((d) => d.toISOString().slice(0, 10));
const modernInstant = fc.date({
  min: new Date('1970-01-01T00:00:00.000Z'),
  max: new Date('2100-12-31T23:59:59.999Z'),
  noInvalidDate: true,
});

describe('parseDateOnly: plain days', () => {
  it.each(['2026-03-01', '2024-02-29', '2000-02-29', '0001-01-01', '9999-12-31'])('keeps %s as that day', (d) => {
    expect(parseDateOnly(d)).toEqual(ok(d));
  });

  it.each(['2026-02-30', '2026-04-31', '2025-02-29', '1900-02-29', '2026-13-01', '2026-00-10', '2026-01-00', '2026-01-32'])(
    'refuses the impossible date %s',
    (d) => {
      expect(parseDateOnly(d)).toEqual({ ok: false, reason: 'is not a real calendar date' });
    },
  );

  it('refuses year 0000', () => {
    expect(parseDateOnly('0000-06-15')).toEqual({ ok: false, reason: 'must fall in the years 0001-9999' });
  });
});

describe('parseDateOnly: timestamps round to the nearest UTC day', () => {
  it.each([
    ['2026-03-01T11:59:59.999Z', '2026-03-01'],
    ['2026-03-01T11:59:59Z', '2026-03-01'],
    ['2026-03-01T11:59:59.999999999Z', '2026-03-01'], // sub-millisecond digits never round up
    ['2026-03-01T00:00:00Z', '2026-03-01'],
    ['2026-03-01T12:00:00.000Z', '2026-03-02'],
    ['2026-03-01T12:00Z', '2026-03-02'],
    ['2026-03-01T15:00:00Z', '2026-03-02'],
    ['2026-03-01T23:59:59.999Z', '2026-03-02'],
  ])('%s -> %s', (input, day) => {
    expect(parseDateOnly(input)).toEqual(ok(day));
  });

  it.each([
    ['2026-03-01T23:30:00-05:00', '2026-03-02'], // 04:30Z on 03-02 (contract example)
    ['2026-03-01T19:00:00-05:00', '2026-03-02'], // exactly midnight UTC
    ['2026-03-01T06:59:59-05:00', '2026-03-01'], // 11:59:59Z
    ['2026-03-01T07:00:00-05:00', '2026-03-02'], // 12:00Z
    ['2026-03-01T00:00:00+14:00', '2026-02-28'], // 2026-02-28T10:00Z
    ['2026-03-01T10:00:00+14:00', '2026-03-01'], // 2026-02-28T20:00Z rounds up
    ['2026-03-01T21:59:59+14:00', '2026-03-01'], // 07:59:59Z
    ['2026-03-01T00:00:00-12:00', '2026-03-02'], // 12:00Z
    ['2026-03-01T23:59:59-12:00', '2026-03-02'], // 2026-03-02T11:59:59Z
    ['2026-03-01T17:29:59.999+05:30', '2026-03-01'], // 11:59:59.999Z
    ['2026-03-01T17:30:00+05:30', '2026-03-02'], // 12:00Z
    ['2026-03-01T15:00:00+00:00', '2026-03-02'],
    ['2026-03-01T15:00:00-00:00', '2026-03-02'],
  ])('applies the offset first: %s -> %s', (input, day) => {
    expect(parseDateOnly(input)).toEqual(ok(day));
  });

  it.each([
    ['2026-12-31T12:00:00Z', '2027-01-01'],
    ['2026-12-31T11:59:59Z', '2026-12-31'],
    ['2026-01-31T12:00:00Z', '2026-02-01'],
    ['2026-04-30T18:00:00Z', '2026-05-01'],
    ['2027-01-01T05:00:00+06:00', '2027-01-01'], // 2026-12-31T23:00Z rounds up
    ['2027-01-01T01:00:00+14:00', '2026-12-31'], // 2026-12-31T11:00Z rolls back a year
  ])('rolls over month and year ends: %s -> %s', (input, day) => {
    expect(parseDateOnly(input)).toEqual(ok(day));
  });

  it.each([
    ['2024-02-28T13:00:00Z', '2024-02-29'],
    ['2025-02-28T13:00:00Z', '2025-03-01'],
    ['2024-02-29T11:00:00Z', '2024-02-29'],
    ['2024-02-29T12:00:00Z', '2024-03-01'],
  ])('handles leap days: %s -> %s', (input, day) => {
    expect(parseDateOnly(input)).toEqual(ok(day));
  });

  it('refuses timestamps on impossible dates or times', () => {
    expect(parseDateOnly('2025-02-29T10:00:00Z')).toEqual({ ok: false, reason: 'is not a real calendar date' });
    expect(parseDateOnly('2026-02-30T10:00:00Z')).toEqual({ ok: false, reason: 'is not a real calendar date' });
    expect(parseDateOnly('2026-13-01T10:00:00Z')).toEqual({ ok: false, reason: 'is not a real calendar date' });
    for (const t of ['2026-03-01T25:00:00Z', '2026-03-01T24:00:00Z', '2026-03-01T12:60:00Z', '2026-03-01T12:00:60Z']) {
      expect(parseDateOnly(t)).toEqual({ ok: false, reason: 'is not a real time of day' });
    }
    expect(parseDateOnly('2026-03-01T12:00:00+24:00')).toMatchObject({ ok: false });
    expect(parseDateOnly('2026-03-01T12:00:00+05:60')).toMatchObject({ ok: false });
  });

  it('keeps results within the years 0001-9999', () => {
    expect(parseDateOnly('9999-12-31T11:59:59Z')).toEqual(ok('9999-12-31'));
    expect(parseDateOnly('9999-12-31T12:00:00Z')).toEqual({ ok: false, reason: 'must fall in the years 0001-9999' });
    expect(parseDateOnly('0001-01-01T00:00:00+14:00')).toEqual({ ok: false, reason: 'must fall in the years 0001-9999' });
    // 0000-12-31T23:00Z rounds forward into year 1, so it is accepted.
    expect(parseDateOnly('0001-01-01T00:00:00+01:00')).toEqual(ok('0001-01-01'));
  });
});

describe('parseDateOnly: refuses anything else', () => {
  it.each([
    '',
    'hello',
    ' 2026-03-01',
    '2026-03-01 ',
    '2026/03/01',
    '20260301',
    '2026-3-1',
    '26-03-01',
    '+002026-03-01',
    '２０２６-03-01',
    '2026-03-01T12:00:00', // no offset: the instant is unknowable
    '2026-03-01T12:00',
    '2026-03-01 12:00:00Z',
    '2026-03-01T12Z',
    '2026-03-01T12:00:00.Z',
    '2026-03-01T12:00:00+0500',
    '2026-03-01T12:00:00+05',
    '2026-03-01t12:00:00z',
    '2026-03-01T12:00:00Z[Europe/Paris]',
  ])('refuses %j', (input) => {
    expect(parseDateOnly(input)).toEqual({ ok: false, reason: expect.stringContaining('must be a date in the form YYYY-MM-DD') });
  });

  it.each([null, undefined, 20260301, true, {}, [], new Date('2026-03-01T00:00:00Z'), ['2026-03-01']])('refuses the non-string %j', (input) => {
    expect(parseDateOnly(input)).toMatchObject({ ok: false, reason: expect.stringContaining('YYYY-MM-DD') });
  });

  it('never throws, and every accepted value is a real day (property)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.anything()), (input) => {
        const result = parseDateOnly(input);
        if (result.ok) expect(formatDateOnly(result.value)).toMatch(/^\d{4}-\d{2}-\d{2}T00:00:00\.000Z$/);
        else expect(result.reason.length).toBeGreaterThan(0);
      }),
    );
  });
});

describe('parseDateOnly properties', () => {
  it('for any instant in 1970-2100, equals the UTC date of (t + 12h)', () => {
    // Oracle: adding half a day and truncating is the same as rounding to the nearest day.
    fc.assert(
      fc.property(modernInstant, (t) => {
        expect(parseDateOnly(t.toISOString())).toEqual(ok(utcDay(t.getTime() + 12 * HOUR_MS)));
      }),
      { numRuns: 1000 },
    );
  });

  it('gives the same day for the same instant written with any offset', () => {
    const offsetMinutes = fc.integer({ min: -12 * 60, max: 14 * 60 });
    fc.assert(
      fc.property(modernInstant, offsetMinutes, (t, offset) => {
        const local = new Date(t.getTime() + offset * 60_000).toISOString().slice(0, 23);
        const abs = Math.abs(offset);
        const suffix = `${offset < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
        expect(parseDateOnly(local + suffix)).toEqual(parseDateOnly(t.toISOString()));
      }),
      { numRuns: 500 },
    );
  });

  it('round-trips any valid day through formatDateOnly', () => {
    fc.assert(
      fc.property(anyDay, (d) => {
        const parsed = parseDateOnly(d);
        expect(parsed).toEqual(ok(d));
        if (!parsed.ok) return;
        const formatted = formatDateOnly(parsed.value);
        expect(formatted).toBe(`${d}T00:00:00.000Z`);
        expect(parseDateOnly(formatted)).toEqual(ok(d));
      }),
      { numRuns: 1000 },
    );
  });
});

describe('formatDateOnly', () => {
  it('writes the API output form', () => {
    expect(formatDateOnly('2026-03-01')).toBe('2026-03-01T00:00:00.000Z');
    expect(formatDateOnly('0001-01-01')).toBe('0001-01-01T00:00:00.000Z');
  });

  it.each(['2026-02-30', '2026-03-01T00:00:00Z', '', 'x'])('throws on %j', (d) => {
    expect(() => formatDateOnly(d)).toThrow(RangeError);
  });
});

describe('localDate', () => {
  it.each([
    ['2026-03-01T22:59:59.999Z', 'Europe/Paris', '2026-03-01'],
    ['2026-03-01T23:00:00.000Z', 'Europe/Paris', '2026-03-02'], // midnight in Paris (UTC+1)
    ['2026-07-01T21:59:59.999Z', 'Europe/Paris', '2026-07-01'],
    ['2026-07-01T22:00:00.000Z', 'Europe/Paris', '2026-07-02'], // midnight in Paris (UTC+2, summer)
    ['2026-03-02T04:59:59.999Z', 'America/New_York', '2026-03-01'],
    ['2026-03-02T05:00:00.000Z', 'America/New_York', '2026-03-02'],
    ['2026-03-01T10:00:00.000Z', 'Pacific/Kiritimati', '2026-03-02'], // UTC+14
    ['2026-03-01T11:59:59.999Z', 'Pacific/Pago_Pago', '2026-03-01'], // UTC-11
    ['2026-03-01T23:59:59.999Z', 'UTC', '2026-03-01'],
  ])('%s in %s is %s', (instant, zone, day) => {
    expect(localDate(new Date(instant), zone)).toBe(day);
  });

  it('matches the UTC date in UTC (property)', () => {
    fc.assert(
      fc.property(modernInstant, (t) => {
        expect(localDate(t, 'UTC')).toBe(utcDay(t.getTime()));
      }),
    );
  });

  it('throws on a bad zone or an invalid Date', () => {
    expect(() => localDate(new Date(), 'Mars/Base')).toThrow(RangeError);
    expect(() => localDate(new Date(Number.NaN), 'UTC')).toThrow(RangeError);
  });
});

describe('zonedDateTimeToUtc', () => {
  it.each([
    ['2026-03-28', 'Europe/Paris', '2026-03-28T08:00:00.000Z'], // CET, day before the change
    ['2026-03-29', 'Europe/Paris', '2026-03-29T07:00:00.000Z'], // CEST from 02:00 that morning
    ['2026-10-24', 'Europe/Paris', '2026-10-24T07:00:00.000Z'], // CEST
    ['2026-10-25', 'Europe/Paris', '2026-10-25T08:00:00.000Z'], // CET from 03:00 that morning
    ['2026-03-07', 'America/New_York', '2026-03-07T14:00:00.000Z'], // EST
    ['2026-03-08', 'America/New_York', '2026-03-08T13:00:00.000Z'], // EDT from 02:00
    ['2026-10-31', 'America/New_York', '2026-10-31T13:00:00.000Z'], // EDT
    ['2026-11-01', 'America/New_York', '2026-11-01T14:00:00.000Z'], // EST from 02:00
    ['2026-03-08', 'UTC', '2026-03-08T09:00:00.000Z'],
    ['2026-03-08', 'Asia/Kolkata', '2026-03-08T03:30:00.000Z'],
  ])('09:00 on %s in %s is %s', (day, zone, expected) => {
    expect(iso(zonedDateTimeToUtc(day, 9, 0, zone))).toBe(expected);
  });

  it('in a gap, gives the first valid instant after it', () => {
    // New York 2026-03-08: 02:00 EST jumps to 03:00 EDT (07:00Z).
    expect(iso(zonedDateTimeToUtc('2026-03-08', 1, 59, 'America/New_York'))).toBe('2026-03-08T06:59:00.000Z');
    expect(iso(zonedDateTimeToUtc('2026-03-08', 2, 0, 'America/New_York'))).toBe('2026-03-08T07:00:00.000Z');
    expect(iso(zonedDateTimeToUtc('2026-03-08', 2, 30, 'America/New_York'))).toBe('2026-03-08T07:00:00.000Z');
    expect(iso(zonedDateTimeToUtc('2026-03-08', 3, 0, 'America/New_York'))).toBe('2026-03-08T07:00:00.000Z');
    // Paris 2026-03-29: 02:00 CET jumps to 03:00 CEST (01:00Z).
    expect(iso(zonedDateTimeToUtc('2026-03-29', 2, 30, 'Europe/Paris'))).toBe('2026-03-29T01:00:00.000Z');
    // Lord Howe moves by 30 minutes: 02:00 -> 02:30 (+11:00).
    expect(iso(zonedDateTimeToUtc('2026-10-04', 2, 15, 'Australia/Lord_Howe'))).toBe('2026-10-03T15:30:00.000Z');
    // Samoa skipped 2011-12-30 entirely: any time that day is the first instant of 12-31 (+14:00).
    expect(iso(zonedDateTimeToUtc('2011-12-30', 9, 0, 'Pacific/Apia'))).toBe('2011-12-30T10:00:00.000Z');
  });

  it('in an overlap, gives the earlier instant', () => {
    // New York 2026-11-01: 01:00-01:59 happens in EDT (05:xxZ) and again in EST (06:xxZ).
    expect(iso(zonedDateTimeToUtc('2026-11-01', 1, 30, 'America/New_York'))).toBe('2026-11-01T05:30:00.000Z');
    expect(iso(zonedDateTimeToUtc('2026-11-01', 2, 0, 'America/New_York'))).toBe('2026-11-01T07:00:00.000Z');
    // Paris 2026-10-25: 02:00-02:59 happens in CEST (00:xxZ) and again in CET (01:xxZ).
    expect(iso(zonedDateTimeToUtc('2026-10-25', 2, 30, 'Europe/Paris'))).toBe('2026-10-25T00:30:00.000Z');
  });

  it('returns the earliest instant whose local wall time is at or after the request (property)', () => {
    const zones = listTimeZones();
    const day = fc
      .date({ min: new Date('1990-01-01T00:00:00Z'), max: new Date('2040-12-31T00:00:00Z'), noInvalidDate: true })
      .map((d) => d.toISOString().slice(0, 10));
    // A local wall time as a number, so times can be compared across offsets.
    const wallOf = (ms: number, zone: string): number => {
      const l = DateTime.fromMillis(ms, { zone });
      return Date.UTC(l.year, l.month - 1, l.day, l.hour, l.minute, l.second, l.millisecond);
    };
    fc.assert(
      fc.property(fc.constantFrom(...zones), day, fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), (zone, d, h, m) => {
        const requested = Date.parse(`${d}T${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}:00Z`);
        const result = zonedDateTimeToUtc(d, h, m, zone).getTime();
        expect(wallOf(result, zone)).toBeGreaterThanOrEqual(requested);
        expect(wallOf(result - 1, zone)).toBeLessThan(requested);
      }),
      { numRuns: 1000 },
    );
  });

  it('throws on bad arguments', () => {
    expect(() => zonedDateTimeToUtc('2026-02-30', 9, 0, 'UTC')).toThrow(RangeError);
    expect(() => zonedDateTimeToUtc('2026-03-01', 24, 0, 'UTC')).toThrow(RangeError);
    expect(() => zonedDateTimeToUtc('2026-03-01', 9, 60, 'UTC')).toThrow(RangeError);
    expect(() => zonedDateTimeToUtc('2026-03-01', 9.5, 0, 'UTC')).toThrow(RangeError);
    expect(() => zonedDateTimeToUtc('2026-03-01', 9, 0, 'Mars/Base')).toThrow(RangeError);
  });
});

describe('isValidTimeZone and listTimeZones', () => {
  it.each(['Europe/Paris', 'UTC', 'America/New_York', 'Asia/Kolkata', 'Etc/GMT+5', 'America/Argentina/Buenos_Aires'])(
    'accepts %s',
    (zone) => expect(isValidTimeZone(zone)).toBe(true),
  );

  it.each(['', 'Mars/Base', '+02:00', '-05:00', '+0200', 'UTC+2', ' Europe/Paris', 'Europe/Paris ', 'Europe//Paris'])(
    'refuses %j',
    (zone) => expect(isValidTimeZone(zone)).toBe(false),
  );

  it('refuses a non-string at run time', () => {
    expect(isValidTimeZone(undefined as unknown as string)).toBe(false);
  });

  it('lists every zone once, sorted, UTC included, all valid', () => {
    const zones = listTimeZones();
    expect(zones).toContain('UTC');
    expect(zones).toContain('Europe/Paris');
    expect(zones).toContain('America/New_York');
    expect(new Set(zones).size).toBe(zones.length);
    expect([...zones].sort()).toEqual(zones);
    expect(zones.every(isValidTimeZone)).toBe(true);
  });
});

describe('addDays', () => {
  it.each([
    ['2026-02-28', 1, '2026-03-01'],
    ['2024-02-28', 1, '2024-02-29'],
    ['2026-12-31', 1, '2027-01-01'],
    ['2026-01-01', -1, '2025-12-31'],
    ['2026-03-01', 0, '2026-03-01'],
    ['2026-03-28', 2, '2026-03-30'], // across a DST change: days are calendar days, not 24h
    ['0001-01-02', -1, '0001-01-01'],
  ])('%s + %i = %s', (day, n, expected) => {
    expect(addDays(day, n)).toBe(expected);
  });

  it('throws outside 0001-9999, on fractional n, and on a non-day', () => {
    expect(() => addDays('9999-12-31', 1)).toThrow(RangeError);
    expect(() => addDays('0001-01-01', -1)).toThrow(RangeError);
    expect(() => addDays('2026-03-01', 0.5)).toThrow(RangeError);
    expect(() => addDays('2026-02-30', 1)).toThrow(RangeError);
  });

  it('agrees with Date arithmetic and inverts itself (property)', () => {
    const day = modernInstant.map((t) => utcDay(t.getTime()));
    fc.assert(
      fc.property(day, fc.integer({ min: -20_000, max: 20_000 }), (d, n) => {
        expect(addDays(d, n)).toBe(utcDay(Date.parse(d) + n * 24 * HOUR_MS));
        expect(addDays(addDays(d, n), -n)).toBe(d);
      }),
    );
  });
});
