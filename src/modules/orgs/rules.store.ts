import type { Executor } from '../../db/database.js';
import { precompile } from '../../db/precompiled.js';
import type { AssignmentRule } from './rules.schemas.js';

const selectRules = precompile((db, organizationId: string) => db.selectFrom('assignment_rules').select('rules').where('organization_id', '=', organizationId));

/** Read inside every lead create's transaction (compiled once: building it cost more than running it). */
export async function loadRules(db: Executor, organizationId: string): Promise<AssignmentRule[]> {
  const [row] = await selectRules(db, organizationId);
  return row ? (JSON.parse(row.rules) as AssignmentRule[]) : [];
}

export async function saveRules(db: Executor, organizationId: string, rules: AssignmentRule[], now: string): Promise<void> {
  await db
    .insertInto('assignment_rules')
    .values({ organization_id: organizationId, rules: JSON.stringify(rules), updated_at: now })
    .onConflict((oc) => oc.column('organization_id').doUpdateSet({ rules: JSON.stringify(rules), updated_at: now }))
    .execute();
}

/**
 * Advances a round-robin rule's cursor by `count` turns and returns the new (last taken) position. The increment is a single UPDATE …
 * RETURNING inside the lead's transaction, so concurrent creates serialize on the row and each gets its own turn.
 */
export async function advanceRoundRobin(db: Executor, organizationId: string, ruleId: string, count: number): Promise<number> {
  await db
    .insertInto('round_robin_cursors')
    .values({ organization_id: organizationId, rule_id: ruleId, position: 0 })
    .onConflict((oc) => oc.columns(['organization_id', 'rule_id']).doNothing())
    .execute();
  const row = await db
    .updateTable('round_robin_cursors')
    .set((eb) => ({ position: eb('position', '+', count) }))
    .where('organization_id', '=', organizationId)
    .where('rule_id', '=', ruleId)
    .returning('position')
    .executeTakeFirstOrThrow();
  return row.position;
}
