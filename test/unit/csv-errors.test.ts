import { CsvError, type Options } from 'csv-parse';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { csvError, type RecordEnd } from '../../src/modules/import/csv-errors.js';

/** Parses like the import worker (plus `extra` options) and returns the error it would report. */
function errorOf(text: string, extra: Options = {}): Error {
  let lastRecord: RecordEnd = { lines: 0, empty_lines: 0 };
  try {
    parse(text, { bom: true, skip_empty_lines: true, relax_column_count: true, info: true, ...extra, on_record: (record, info) => {
      lastRecord = info;
      return record;
    } });
  } catch (err) {
    if (err instanceof CsvError) return csvError(err, lastRecord);
    throw err;
  }
  throw new Error('parsed without an error');
}

const HEADER = 'name,email,phoneNumber\n';

describe('csv-parse errors as the import reports them', () => {
  it.each([
    ['an unclosed quote (placed where it opens, not at the end of the file)', `${HEADER}A,a@example.com,\n\n\nAda,"ada@example.com,+14155550100\nB,b@example.com,\n`, {},
      'malformed CSV at line 5 (record 3, column 2): a quoted field is never closed before the end of the file (line 6) (CSV_QUOTE_NOT_CLOSED)'],
    ['an unclosed quote in the header', `name,"email\nAda,ada@example.com\n`, {},
      'malformed CSV at line 1 (record 1, column 2): a quoted field is never closed before the end of the file (line 2) (CSV_QUOTE_NOT_CLOSED)'],
    ['a quote inside an unquoted field', `${HEADER}Ada,ada@example.com "work",+14155550100\n`, {},
      'malformed CSV at line 2 (record 2, column 2): a quote appears inside a field that does not start with one; quote the whole field and double each quote inside it (INVALID_OPENING_QUOTE)'],
    ['characters after a closing quote, after a multi-line field', `${HEADER}"Ada\nLovelace",ada@example.com,"+14155550100"9\n`, {},
      'malformed CSV at line 3 (record 2, column 3): a quoted field goes on after its closing quote; double each quote inside a quoted field (CSV_INVALID_CLOSING_QUOTE)'],
    ['a record with too many fields (when the column count is strict)', `${HEADER}Ada,ada@example.com,+14155550100,extra\n`, { relax_column_count: false },
      'malformed CSV at line 2 (record 2): the record does not have as many fields as the header (CSV_RECORD_INCONSISTENT_FIELDS_LENGTH)'],
    ['a record over the size limit', `${HEADER}Ada,ada@example.com,+14155550100\n`, { max_record_size: 25 },
      'malformed CSV at line 2 (record 2): the record is larger than the parser accepts (CSV_MAX_RECORD_SIZE)'],
  ])('%s', (_, text, extra, message) => {
    const error = errorOf(text, extra);
    expect(error.message).toBe(message);
    expect(Object.keys(error)).toEqual([]);
  });

  it('names the code of an error it has no words for, still without the cells', () => {
    const err = new CsvError('CSV_UNKNOWN_ERROR', 'Something about "ada@example.com"', undefined, { lines: 7, records: 6, record: ['ada@example.com'] });
    expect(csvError(err, { lines: 6, empty_lines: 0 }).message).toBe('malformed CSV at line 7 (record 7): the CSV parser refused it (CSV_UNKNOWN_ERROR)');
  });
});
