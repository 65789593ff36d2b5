import { namesFewItems, type FieldFilter } from '../objects/record-filters.js';
import { customFieldCondition } from '../fields/custom-fields.store.js';
import type { Dialect } from '../../config.js';
import type { Executor } from '../../db/database.js';
import type { DealsTable } from '../../db/schema.js';
import { substringMatch } from '../../db/search.js';
import type { ListRequest } from '../../lib/list-request.js';
import { equalityConditions, listScope, readColumnPage, timeRangeConditions, type ListPage } from '../../db/list-page.js';
import { inView, type TrashView } from '../../db/trash.js';
import { guardExternalId } from '../shared/external-id.js';

/** A deal as stored: amount as exact decimal text, expectedCloseDate as 'YYYY-MM-DD'. */
export interface StoredDeal {
  seq: number;
  id: string;
  organizationId: string;
  name: string;
  stage: string;
  amount: string | null;
  currency: string | null;
  accountId: string | null;
  leadId: string | null;
  ownerId: string | null;
  expectedCloseDate: string | null;
  externalId: string | null;
  /** Custom field values as stored (JSON, e-mails and phones sealed; modules/fields/custom-values.ts). */
  custom: string | null;
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
}

type Row = Omit<DealsTable, 'seq' | 'deleted_at'> & { seq: number; deleted_at: string | null };

const toStored = (r: Row): StoredDeal => ({
  seq: r.seq,
  id: r.id,
  organizationId: r.organization_id,
  name: r.name,
  stage: r.stage,
  amount: r.amount,
  currency: r.currency,
  accountId: r.account_id,
  leadId: r.lead_id,
  ownerId: r.owner_id,
  expectedCloseDate: r.expected_close_date,
  externalId: r.external_id,
  custom: r.custom,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  deletedAt: r.deleted_at,
});

/** The written columns: `deleted_at` only ever changes through db/trash.ts. */
function toRow(d: Omit<StoredDeal, 'seq'>): Omit<DealsTable, 'seq' | 'deleted_at'> {
  return {
    id: d.id,
    organization_id: d.organizationId,
    name: d.name,
    stage: d.stage,
    amount: d.amount,
    currency: d.currency,
    account_id: d.accountId,
    lead_id: d.leadId,
    owner_id: d.ownerId,
    expected_close_date: d.expectedCloseDate,
    external_id: d.externalId,
    custom: d.custom,
    created_at: d.createdAt,
    updated_at: d.updatedAt,
  };
}

export async function insertDeal(db: Executor, deal: Omit<StoredDeal, 'seq'>): Promise<void> {
  await guardExternalId('deal', () => db.insertInto('deals').values(toRow(deal)).execute());
}

/**
 * One deal of the organization, a live one unless `view` says otherwise. `forUpdate` (PostgreSQL) locks the
 * row until the transaction ends, so concurrent PATCHes see each other's result.
 */
export async function findDeal(db: Executor, organizationId: string, id: string, lock?: { dialect: Dialect }, view: TrashView = 'live'): Promise<StoredDeal | undefined> {
  const q = db.selectFrom('deals').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).where(inView('deals', view));
  const row = await (lock?.dialect === 'postgres' ? q.forUpdate() : q).executeTakeFirst();
  return row && toStored(row);
}

export async function updateDeal(db: Executor, deal: StoredDeal): Promise<void> {
  const { id: _id, organization_id: _org, created_at: _created, ...changes } = toRow(deal);
  await guardExternalId('deal', () => db.updateTable('deals').set(changes).where('organization_id', '=', deal.organizationId).where('id', '=', deal.id).execute());
}

/** The equality filters of `GET /deals`: query parameter → column. */
export const DEAL_FILTERS = { stage: 'stage', accountId: 'account_id', leadId: 'lead_id', ownerId: 'owner_id', externalId: 'external_id' } as const;
export type DealFilter = Partial<Record<keyof typeof DEAL_FILTERS, string>> & { nameContains?: string | undefined; fields?: readonly FieldFilter[] };

/** A page of deals (live, or the trash) in the requested sort (db/list-page.ts). */
export async function listDeals(db: Executor, dialect: Dialect, organizationId: string, filter: DealFilter, request: ListRequest, view: TrashView = 'live'): Promise<ListPage<StoredDeal>> {
  const byReference = filter.leadId !== undefined || filter.accountId !== undefined || (filter.fields ?? []).some(namesFewItems);
  let q = db.selectFrom('deals').where(listScope(dialect, 'deals.organization_id', organizationId, byReference)).where(inView('deals', view));
  for (const c of [...equalityConditions('deals', DEAL_FILTERS, filter), ...timeRangeConditions('deals', request.range)]) q = q.where(c);
  if (filter.nameContains !== undefined) q = q.where(substringMatch(dialect, 'deals', 'name', filter.nameContains));
  for (const f of filter.fields ?? []) q = q.where(customFieldCondition(dialect, 'deals', organizationId, f));
  const page = await readColumnPage<DealsTable & { seq: number; deleted_at: string | null }>(q, 'deals', request);
  return { rows: page.rows.map(toStored), pagination: page.pagination };
}

/** How many deals of the organization are in each of `stages` (stages without deals are left out). */
/** The ids of the organization's live deals in one stage, oldest first. */
/** The deals of the organization in `stage`, live and trashed (a removed stage moves both: a restored deal must land in a stage that exists). */
export async function dealIdsInStage(db: Executor, organizationId: string, stage: string): Promise<string[]> {
  const rows = await db.selectFrom('deals').select('id').where('organization_id', '=', organizationId).where('stage', '=', stage).orderBy('seq').execute();
  return rows.map((r) => r.id);
}

export async function countDealsByStage(db: Executor, organizationId: string, stages: readonly string[], view: TrashView = 'live'): Promise<Map<string, number>> {
  if (stages.length === 0) return new Map();
  const rows = await db
    .selectFrom('deals')
    .select(['stage', (eb) => eb.fn.countAll<number>().as('n')])
    .where('organization_id', '=', organizationId)
    .where(inView('deals', view))
    .where('stage', 'in', [...stages])
    .groupBy('stage')
    .execute();
  return new Map(rows.map((r) => [r.stage, Number(r.n)]));
}
