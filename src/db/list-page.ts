import { sql, type Expression, type RawBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { ListPosition } from '../lib/list-cursor.js';
import { cursorPagination, offsetOf, paginate, type Pagination } from '../lib/pagination.js';
import type { ListRequest, TimeRange } from '../lib/list-request.js';
import { validationFailed } from '../errors.js';
import type { Dialect } from '../config.js';

/**
 * One list mechanism for every resource (contract §8): an order on one sort key with `seq` as the tiebreak,
 * keyset positions for cursor pages, offset pages with their count, and the shared time-range filters.
 * A store hands over its filtered query and its sort key; an index on (scope, key, seq) of the live rows
 * (migration 0016) then serves a cursor page at any depth from one index range.
 */

export interface SortKey {
  /** The sorted value, e.g. `leads.created_at`. */
  expr: Expression<unknown>;
  descending: boolean;
  /** The tiebreak, e.g. `leads.seq`: unique, so the order is total and a position is exact. */
  seq: Expression<unknown>;
  /** Null values sort first ascending and last descending (record fields can be unset). */
  nullable?: boolean;
  /** The type of the sort value: a cursor holding another is refused before it reaches the query. */
  valueType: 'string' | 'number';
  /**
   * The key is an expression (an expression index serves it): SQLite ranges such an index on a plain
   * comparison but not on a row value, so the position also bounds the key alone.
   */
  expression?: boolean;
}

/** The key of a column sort named as the API names it: `-createdAt` → `created_at desc`. */
export function columnSort(table: string, sort: string, columns: Record<string, string>): SortKey {
  const descending = sort.startsWith('-');
  const column = columns[descending ? sort.slice(1) : sort];
  if (column === undefined) throw new Error(`no column for sort ${sort}`);
  return { expr: sql.ref(`${table}.${column}`), descending, seq: sql.ref(`${table}.seq`), valueType: column === 'seq' ? 'number' : 'string' };
}

/** The sorts of leads, accounts and deals, and the trash order. */
export const TIME_AND_NAME: Record<string, string> = { createdAt: 'created_at', updatedAt: 'updated_at', name: 'name', deletedAt: 'deleted_at' };

function orderBy(key: SortKey): RawBuilder<unknown> {
  const dir = sql.raw(key.descending ? 'desc' : 'asc');
  const nulls = key.nullable ? sql.raw(key.descending ? ' nulls last' : ' nulls first') : sql``;
  return sql`${key.expr} ${dir}${nulls}, ${key.seq} ${dir}`;
}

/** The rows strictly after `p` in the order of `key`. */
export function afterPosition(key: SortKey, p: ListPosition): Expression<SqlBool> {
  const beyond = sql.raw(key.descending ? '<' : '>');
  const seqBeyond = sql<SqlBool>`${key.seq} ${beyond} ${p.seq}`;
  // A row-value comparison: both databases turn it into one range of the (scope, key, seq) index.
  if (!key.nullable) {
    const rows = sql<SqlBool>`(${key.expr}, ${key.seq}) ${beyond} (${p.value}, ${p.seq})`;
    return key.expression ? sql<SqlBool>`(${key.expr} ${sql.raw(key.descending ? '<=' : '>=')} ${p.value} and ${rows})` : rows;
  }
  // Nulls come first ascending, last descending.
  if (p.value === null) return key.descending ? sql<SqlBool>`(${key.expr} is null and ${seqBeyond})` : sql<SqlBool>`(${key.expr} is not null or ${seqBeyond})`;
  const tail = key.descending ? sql`or ${key.expr} is null` : sql``;
  return sql<SqlBool>`(${key.expr} ${beyond} ${p.value} or (${key.expr} = ${p.value} and ${seqBeyond}) ${tail})`;
}

/** The columns holding an item's creation and change times (an erasure receipt is created when it completes). */
export interface TimeColumns {
  created: string;
  updated: string;
}

const TIMESTAMPS: TimeColumns = { created: 'created_at', updated: 'updated_at' };

/** The creation and change time conditions of a list, on `table` (text timestamps compare in time order). */
export function timeRangeConditions(table: string, range: TimeRange, columns: TimeColumns = TIMESTAMPS): Expression<SqlBool>[] {
  const col = (c: keyof TimeColumns) => sql.ref(`${table}.${columns[c]}`);
  return [
    ...(range.createdAfter !== undefined ? [sql<SqlBool>`${col('created')} > ${range.createdAfter}`] : []),
    ...(range.createdBefore !== undefined ? [sql<SqlBool>`${col('created')} < ${range.createdBefore}`] : []),
    ...(range.updatedAfter !== undefined ? [sql<SqlBool>`${col('updated')} > ${range.updatedAfter}`] : []),
    ...(range.updatedBefore !== undefined ? [sql<SqlBool>`${col('updated')} < ${range.updatedBefore}`] : []),
  ];
}

/** Equality filters declared as a table from query parameter to column: one entry per filter. */
export function equalityConditions(table: string, columns: Record<string, string>, query: Record<string, unknown>): Expression<SqlBool>[] {
  return Object.entries(columns).flatMap(([param, column]) => {
    const value = query[param];
    return value === undefined ? [] : [sql<SqlBool>`${sql.ref(`${table}.${column}`)} = ${value}`];
  });
}

/**
 * The scope condition of a list (`leads.organization_id = ?`, `records.object_id = ?`). Narrowed by a
 * reference to one item (a reverse lookup: `GET /leads?accountId=`, a relation's `filter[field]=<id>`) or by
 * another filter that names few items (an e-mail or phone field's value: record-filters.ts namesFewItems), SQLite
 * checks it per row (`+`): otherwise its planner, seeing ORDER BY … LIMIT, walks the scope's sort index and
 * tests every row of the organization or object (1.1 s for `sort=name` at 300,000 leads), instead of reading
 * the few rows the reference's index names and sorting them. Item ids are unique across organizations, and
 * the condition still drops any row outside the scope.
 */
export function listScope(dialect: Dialect, column: string, value: string, byReference: boolean): Expression<SqlBool> {
  const ref = sql.ref(column);
  return dialect === 'sqlite' && byReference ? sql<SqlBool>`+${ref} = ${value}` : sql<SqlBool>`${ref} = ${value}`;
}

export interface ListPage<R> {
  rows: R[];
  pagination: Pagination;
}

/** How a row names its position: its sort value and its seq. */
export type PositionOf<R> = (row: R) => { value: string | number | null; seq: number };

/**
 * Runs the page's query (filtered, ordered and limited, nothing selected yet) and returns its items in order:
 * by default every column; a store selects its own, or joins the page as a subquery (a delivery's attempts).
 * The page's builder is untyped, so the items are the store's rows as it declares them to readPage.
 */
export type ReadRows = (page: SelectQueryBuilder<any, any, any>) => Promise<unknown[]>;

const everyColumn: ReadRows = (page) => page.selectAll().execute();

/**
 * Reads one page of `query` (filtered and scoped by the store) in the order of `key`. Cursor mode reads one
 * row past the page to know whether there is more and never counts; page mode counts the filter (in
 * parallel with the page) as lists always did. Both return the cursor of the page's last row.
 */
export async function readPage<R>(
  query: SelectQueryBuilder<any, any, any>,
  key: SortKey,
  request: ListRequest,
  positionOf: PositionOf<R>,
  read: ReadRows = everyColumn,
): Promise<ListPage<R>> {
  const cursorOf = (row: R | undefined) => (row === undefined ? null : request.cursorAt(positionOf(row)));
  if (request.cursor) {
    const value = request.after?.value;
    if (value !== undefined && (value === null ? !key.nullable : typeof value !== key.valueType)) {
      throw validationFailed([{ field: 'after', code: 'invalid_cursor', message: 'is not a cursor of this list (pass back nextCursor unchanged)' }]);
    }
    const scoped = request.after ? query.where(afterPosition(key, request.after)) : query;
    const rows = (await read(scoped.orderBy(orderBy(key)).limit(request.limit + 1))) as R[];
    const page = rows.slice(0, request.limit);
    return { rows: page, pagination: cursorPagination(request.limit, rows.length > request.limit ? cursorOf(page.at(-1)) : null) };
  }
  const [rows, count] = await Promise.all([
    read(query.orderBy(orderBy(key)).limit(request.limit).offset(offsetOf(request))) as Promise<R[]>,
    query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow() as Promise<{ n: number | string }>,
  ]);
  return { rows, pagination: paginate(request, Number(count.n), cursorOf(rows.at(-1))) };
}

/** The position of a raw row in a column sort: its value of the sorted column and its seq. */
export function columnPosition<R>(sort: string, columns: Record<string, string> = TIME_AND_NAME): PositionOf<R> {
  const column = columns[sort.replace(/^-/, '')]!;
  return (row) => ({ value: (row as Record<string, string | number | null>)[column] ?? null, seq: Number((row as { seq: number | string }).seq) });
}

/** A page of `table` sorted on one of its columns (createdAt, updatedAt, name, the trash's deletedAt). */
export function readColumnPage<R>(query: SelectQueryBuilder<any, any, any>, table: string, request: ListRequest, columns: Record<string, string> = TIME_AND_NAME): Promise<ListPage<R>> {
  return readPage<R>(query, columnSort(table, request.sort, columns), request, columnPosition<R>(request.sort, columns));
}

/**
 * Creation order as `seq`: a delivery's or an erasure's cursor holds a number, as it did before sorts came, so
 * cursors handed out then still open (deliveries and erasures have no other order; objects and webhooks add theirs).
 */
export const CREATION_ORDER: Record<string, string> = { createdAt: 'seq' };
