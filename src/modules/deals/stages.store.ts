import type { Dialect } from '../../config.js';
import type { Executor } from '../../db/database.js';
import type { DealStage } from './stages.schemas.js';

/** The organization's own stages, or undefined when it still uses the defaults. */
export async function loadStages(db: Executor, organizationId: string): Promise<DealStage[] | undefined> {
  const row = await db.selectFrom('deal_stages').select('stages').where('organization_id', '=', organizationId).executeTakeFirst();
  return row ? (JSON.parse(row.stages) as DealStage[]) : undefined;
}

export async function saveStages(db: Executor, organizationId: string, stages: DealStage[], now: string): Promise<void> {
  const value = JSON.stringify(stages);
  await db
    .insertInto('deal_stages')
    .values({ organization_id: organizationId, stages: value, updated_at: now })
    .onConflict((oc) => oc.column('organization_id').doUpdateSet({ stages: value, updated_at: now }))
    .execute();
}

/**
 * Serializes stage-list changes against deal writes on PostgreSQL: deal writes take a shared lock on the
 * organization row before reading the stages, a stage change an exclusive one before counting deals per
 * stage — so a deal can't land in a stage that is being removed. SQLite transactions already serialize.
 */
export async function lockStages(db: Executor, dialect: Dialect, organizationId: string, mode: 'read' | 'change'): Promise<void> {
  if (dialect !== 'postgres') return;
  const q = db.selectFrom('organizations').select('id').where('id', '=', organizationId);
  await (mode === 'read' ? q.forShare() : q.forUpdate()).execute();
}
