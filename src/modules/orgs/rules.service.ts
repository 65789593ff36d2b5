import type { Executor } from '../../db/database.js';
import { validationFailed } from '../../errors.js';
import { validateValue } from '../../http/validation.js';
import { AssignmentRules, type AssignmentRule } from './rules.schemas.js';
import { loadRules, nextRoundRobinPosition, saveRules } from './rules.store.js';
import { existingUserIds } from './users.store.js';

/** Validates a rules document (shape, unique ids, users of this organization) and replaces the current rules. */
export async function setAssignmentRules(db: Executor, organizationId: string, input: unknown, now: Date): Promise<AssignmentRule[]> {
  const shapeErrors = validateValue(AssignmentRules, input, 'rules');
  if (shapeErrors.length) throw validationFailed(shapeErrors);
  const { rules } = input as AssignmentRules;
  const errors = [];
  const ids = new Set<string>();
  for (const [i, rule] of rules.entries()) {
    if (ids.has(rule.id)) errors.push({ field: `rules.${i}.id`, code: 'duplicate', message: `rule id ${rule.id} is used twice` });
    ids.add(rule.id);
  }
  const userIds = rules.flatMap((r) => (r.assign.type === 'user' ? [r.assign.userId] : r.assign.userIds));
  const known = await existingUserIds(db, organizationId, [...new Set(userIds)]);
  for (const [i, rule] of rules.entries()) {
    const wanted = rule.assign.type === 'user' ? [rule.assign.userId] : rule.assign.userIds;
    for (const id of wanted) if (!known.has(id)) errors.push({ field: `rules.${i}.assign`, code: 'not_found', message: `user ${id} is not in this organization` });
  }
  if (errors.length) throw validationFailed(errors);
  await saveRules(db, organizationId, rules, now.toISOString());
  return rules;
}

export async function getAssignmentRules(db: Executor, organizationId: string): Promise<AssignmentRule[]> {
  return loadRules(db, organizationId);
}

function matches(rule: AssignmentRule, lead: { source: string | null; sourceCampaign: string | null }): boolean {
  return (rule.match.source === undefined || rule.match.source === lead.source)
    && (rule.match.sourceCampaign === undefined || rule.match.sourceCampaign === lead.sourceCampaign);
}

/** The owner the first matching rule gives a new lead, or null. Runs inside the lead's transaction. */
export async function assignOwner(db: Executor, organizationId: string, lead: { source: string | null; sourceCampaign: string | null }): Promise<string | null> {
  const rule = (await loadRules(db, organizationId)).find((r) => matches(r, lead));
  if (!rule) return null;
  if (rule.assign.type === 'user') return rule.assign.userId;
  const position = await nextRoundRobinPosition(db, organizationId, rule.id);
  return rule.assign.userIds[(position - 1) % rule.assign.userIds.length]!;
}
