import type { CsvError } from 'csv-parse';

/**
 * csv-parse's messages quote the cell it stopped in ("… value is "ada@example.com"") and its errors carry the
 * record's cells as properties, while a lead's e-mail and phone must never show in clear on a terminal or in a
 * report. So a parse error is rebuilt from its code and position alone: what went wrong and where.
 */
const QUOTE_IN_FIELD = 'a quote appears inside a field that does not start with one; quote the whole field and double each quote inside it';
const AFTER_CLOSING_QUOTE = 'a quoted field goes on after its closing quote; double each quote inside a quoted field';
const FIELD_COUNT = 'the record does not have as many fields as the header';

/** The problem each csv-parse 6.2 code stands for; `column` when the error's column is where to look. */
const PROBLEMS: Record<string, { problem: string; column: boolean }> = {
  CSV_QUOTE_NOT_CLOSED: { problem: 'a quoted field is never closed', column: true },
  // csv-parse 6.2 names this one without the CSV_ prefix; both spellings, in case a release adds it.
  INVALID_OPENING_QUOTE: { problem: QUOTE_IN_FIELD, column: true },
  CSV_INVALID_OPENING_QUOTE: { problem: QUOTE_IN_FIELD, column: true },
  CSV_INVALID_CLOSING_QUOTE: { problem: AFTER_CLOSING_QUOTE, column: true },
  CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE: { problem: AFTER_CLOSING_QUOTE, column: true },
  CSV_RECORD_INCONSISTENT_FIELDS_LENGTH: { problem: FIELD_COUNT, column: false },
  CSV_RECORD_INCONSISTENT_COLUMNS: { problem: FIELD_COUNT, column: false },
  CSV_MAX_RECORD_SIZE: { problem: 'the record is larger than the parser accepts', column: false },
};

/** csv-parse's counts when the last complete record was read (its `info`), to place an unclosed quote. */
export interface RecordEnd {
  lines: number;
  empty_lines: number;
}

/**
 * The error to report for a csv-parse error: `malformed CSV at line L (record R, column C): <problem> (<code>)`.
 * Lines count from the header (line 1) like row errors; records and columns from 1, the header being record 1.
 */
export function csvError(err: CsvError, lastRecord: RecordEnd): Error {
  const known = PROBLEMS[err.code];
  const count = (key: string) => (typeof err[key] === 'number' ? (err[key] as number) : 0);
  // csv-parse reports an unclosed quote at the end of the file: the quote opened on the first non-empty line after the last complete record.
  const line = err.code === 'CSV_QUOTE_NOT_CLOSED' ? lastRecord.lines + 1 + count('empty_lines') - lastRecord.empty_lines : count('lines');
  const column = known?.column ? `, column ${count('column') + 1}` : '';
  const endOfFile = err.code === 'CSV_QUOTE_NOT_CLOSED' ? ` before the end of the file (line ${count('lines')})` : '';
  const problem = known ? `${known.problem}${endOfFile}` : 'the CSV parser refused it';
  return new Error(`malformed CSV at line ${line} (record ${count('records') + 1}${column}): ${problem} (${err.code})`);
}
