import type { Dialect } from '../../config.js';
import type { Executor } from '../../db/database.js';
import { validationFailed, type FieldError } from '../../errors.js';
import { liveItemIds, type ItemTarget } from '../shared/item-target.store.js';
import type { Definition, Field } from './definition.js';
import { targetName } from './field-values.js';
import { BUILT_IN_TARGETS } from './objects.schemas.js';
import { findObject } from './objects.store.js';

/**
 * Relation fields (contract §9): a value is the id of a live item of the field's target in the same
 * organization. These checks run in the transaction of the write, so the target read is the one the write
 * commits against; what happens to a target later (trash, purge, erasure) leaves the stored id as it is (§7).
 * Any definition — a custom object's, or a built-in's custom fields — is checked through the same functions.
 */

const KIND_OF: Record<(typeof BUILT_IN_TARGETS)[number], ItemTarget['object']> = { leads: 'lead', accounts: 'account', deals: 'deal' };
const isBuiltIn = (target: string): target is (typeof BUILT_IN_TARGETS)[number] => (BUILT_IN_TARGETS as readonly string[]).includes(target);

/** The item kind a relation target names: a built-in (`leads` → lead), else records of the object with that slug. */
export function targetKind(target: string): Omit<ItemTarget, 'id'> {
  return isBuiltIn(target) ? { object: KIND_OF[target] } : { object: 'record', objectSlug: target };
}

/**
 * An error for each relation value that is not a live item of its target in the organization (missing,
 * trashed, another organization's, or of another kind), naming the field and never the value. `values` holds
 * the sent values by field key (parsed; null and absent keys are skipped); one query per target.
 */
export async function relationTargetErrors(db: Executor, organizationId: string, fields: readonly Field[], values: ReadonlyMap<string, unknown>): Promise<FieldError[]> {
  const wanted = new Map<string, { field: Field; id: string }[]>();
  for (const field of fields) {
    const id = values.get(field.key);
    if (field.type !== 'relation' || field.target === undefined || typeof id !== 'string') continue;
    wanted.set(field.target, [...(wanted.get(field.target) ?? []), { field, id }]);
  }
  const errors: FieldError[] = [];
  for (const [target, refs] of wanted) {
    const live = await liveItemIds(db, organizationId, targetKind(target), refs.map((r) => r.id));
    for (const { field } of refs.filter((r) => !live.has(r.id))) {
      errors.push({ field: field.key, code: 'not_found', message: `is not the id of ${targetName(target)} of this organization (or it is in the trash)` });
    }
  }
  return errors;
}

/** relationTargetErrors as a 400 VALIDATION_FAILED. */
export async function checkRelationTargets(db: Executor, organizationId: string, fields: readonly Field[], values: ReadonlyMap<string, unknown>): Promise<void> {
  const errors = await relationTargetErrors(db, organizationId, fields, values);
  if (errors.length) throw validationFailed(errors);
}

/**
 * A definition's relation targets must exist: a built-in kind, the object being defined (`ownSlug`, e.g. a
 * parent project), or another object of the organization.
 */
export async function definitionTargetErrors(db: Executor, dialect: Dialect, organizationId: string, definition: Definition, ownSlug: string): Promise<FieldError[]> {
  const errors: FieldError[] = [];
  for (const [i, f] of definition.fields.entries()) {
    if (f.type !== 'relation' || f.target === undefined || isBuiltIn(f.target) || f.target === ownSlug) continue;
    if (!(await findObject(db, dialect, organizationId, f.target))) {
      errors.push({ field: `fields.${i}.target`, code: 'not_found', message: `must be leads, accounts, deals or the slug of an object of this organization; there is no object "${f.target}"` });
    }
  }
  return errors;
}
