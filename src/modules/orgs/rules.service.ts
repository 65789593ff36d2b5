import type { Database, Executor } from '../../db/database.js';
import { KeyLookupCache } from './key-lookup-cache.js';
import { validationFailed } from '../../errors.js';
import { validateValue } from '../../http/validation.js';
import { AssignmentRules, type AssignmentRule } from './rules.schemas.js';
import { advanceRoundRobin, loadRules, saveRules } from './rules.store.js';
import { activeUserIds, existingUserIds } from './users.store.js';

/**
 * Validates a rules document (shape, unique ids, users of this organization) and replaces the current rules;
 * resolves once every instance's rules cache (cachedRules) has dropped the old ones.
 */
export async function setAssignmentRules(database: Database, organizationId: string, input: unknown, now: Date): Promise<AssignmentRule[]> {
  const db = database.db;
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
  await database.changesSeen?.();
  return rules;
}

export async function getAssignmentRules(db: Executor, organizationId: string): Promise<AssignmentRule[]> {
  return loadRules(db, organizationId);
}

/**
 * Per database handle, the organizations' rules, kept while its change counter stands still (the key lookup
 * cache's rule; on PostgreSQL a rules change notifies every instance, migration 0026): a lead create reads
 * them from here before its transaction, not with a round trip inside it.
 */
const caches = new WeakMap<Database, KeyLookupCache<AssignmentRule[]>>();

/** `db`: the caller's transaction when there is one (SQLite's one connection is taken by it meanwhile). */
export async function cachedRules(database: Database, db: Executor, organizationId: string): Promise<AssignmentRule[]> {
  let cache = caches.get(database);
  if (!cache) caches.set(database, (cache = new KeyLookupCache<AssignmentRule[]>(database)));
  return (await cache.lookup(organizationId, () => loadRules(db, organizationId)))!;
}

function matches(rule: AssignmentRule, lead: { source: string | null; sourceCampaign: string | null }): boolean {
  return (rule.match.source === undefined || rule.match.source === lead.source)
    && (rule.match.sourceCampaign === undefined || rule.match.sourceCampaign === lead.sourceCampaign);
}

type LeadRouting = { source: string | null; sourceCampaign: string | null };

/**
 * The owners the first matching rule gives each new lead (null where none matches), in input order.
 * Runs inside the leads' transaction, with the rules read there unless the caller has them (`known`,
 * cachedRules); a round-robin rule advances its cursor once for all the leads it
 * takes, so a batch and concurrent single creates share the rotation fairly. Deactivated users get no
 * leads: a `user` rule naming one assigns nobody, and a round robin turns among its active users only.
 */
export async function assignOwners(db: Executor, organizationId: string, leads: readonly LeadRouting[], known?: AssignmentRule[]): Promise<(string | null)[]> {
  const rules = known ?? (await loadRules(db, organizationId));
  if (rules.length === 0) return leads.map(() => null);
  const matched = leads.map((lead) => rules.find((r) => matches(r, lead)) ?? null);
  const named = new Set(matched.flatMap((rule) => (rule === null ? [] : rule.assign.type === 'user' ? [rule.assign.userId] : rule.assign.userIds)));
  const active = await activeUserIds(db, organizationId, [...named]);
  const owners: (string | null)[] = matched.map((rule) => (rule?.assign.type === 'user' && active.has(rule.assign.userId) ? rule.assign.userId : null));
  for (const rule of rules) {
    if (rule.assign.type !== 'round_robin') continue;
    const indexes = matched.flatMap((m, i) => (m === rule ? [i] : []));
    const users = rule.assign.userIds.filter((id) => active.has(id));
    if (indexes.length === 0 || users.length === 0) continue;
    const last = await advanceRoundRobin(db, organizationId, rule.id, indexes.length);
    indexes.forEach((leadIndex, k) => {
      owners[leadIndex] = users[(last - indexes.length + k) % users.length]!;
    });
  }
  return owners;
}
