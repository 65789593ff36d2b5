import { Type, type Static } from '@sinclair/typebox';
import type { Executor } from '../../db/database.js';
import { validationFailed, type FieldError } from '../../errors.js';
import { Id, StringEnum } from '../../http/schemas.js';
import { SLUG_PATTERN } from '../objects/objects.schemas.js';
import { isLiveItem } from './item-target.store.js';

/**
 * What a note or task hangs on (contract §9): a lead, account, deal or record, named by its kind as events name
 * it in `data.object`; a record also by its object's slug.
 */
export const TARGET_OBJECTS = ['lead', 'account', 'deal', 'record'] as const;

export const ItemTarget = Type.Object(
  {
    object: StringEnum(TARGET_OBJECTS, { description: 'The kind of item, as events name it in `data.object`.' }),
    id: Id('The item\'s id.'),
    objectSlug: Type.Optional(Type.String({ pattern: SLUG_PATTERN, description: 'The slug of the record\'s object: required when `object` is `record`, refused otherwise.' })),
  },
  { additionalProperties: false, description: 'The lead, account, deal or record this belongs to.' },
);
export type ItemTarget = Static<typeof ItemTarget>;

/** The slug rule JSON Schema can't say: a record's target names its object's slug, no other target does. `at`: the slug's field path. */
export function slugErrors(target: Pick<ItemTarget, 'object' | 'objectSlug'>, at: string): FieldError[] {
  if (target.object === 'record' && target.objectSlug === undefined) return [{ field: at, code: 'required', message: 'is required for a record' }];
  if (target.object !== 'record' && target.objectSlug !== undefined) return [{ field: at, code: 'not_allowed', message: 'is only for records' }];
  return [];
}

/** The slug rule, then whether the item exists and is live in the organization. */
export async function targetErrors(db: Executor, organizationId: string, target: ItemTarget, field = 'target'): Promise<FieldError[]> {
  const slug = slugErrors(target, `${field}.objectSlug`);
  if (slug.length) return slug;
  if (!(await isLiveItem(db, organizationId, target))) return [{ field: `${field}.id`, code: 'not_found', message: `is not a live ${target.object} of this organization` }];
  return [];
}

export async function checkTarget(db: Executor, organizationId: string, target: ItemTarget): Promise<void> {
  const errors = await targetErrors(db, organizationId, target);
  if (errors.length) throw validationFailed(errors);
}
