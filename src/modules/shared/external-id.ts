import { Type } from '@sinclair/typebox';
import { isUniqueViolation } from '../../db/database.js';
import type { LockKey } from '../../db/key-locks.js';
import type { TrashTable } from '../../db/trash.js';
import { AppError } from '../../errors.js';
import { Nullable } from '../../http/schemas.js';

const RULES = 'The integrator\'s own key (1–255 characters), unique per organization and resource (records: per object) among live and trashed items.';

/** `externalId` in create and update bodies: null clears it. */
export const ExternalIdInput = Nullable(Type.String({ minLength: 1, maxLength: 255, description: `${RULES} null clears it.` }));

/** `externalId` on a returned resource. */
export const ExternalIdOutput = Nullable(Type.String({ description: `${RULES} null when unset.` }));

/** The list filter `?externalId=`: the one item holding it (live, or in the trash with `deleted=true`). */
export const ExternalIdQuery = {
  externalId: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'Only the item with this external id (at most one).' })),
};

/** The 409 of a write whose external id another item (live or in the trash) already holds. */
export function externalIdTaken(noun: string): AppError {
  return new AppError('EXTERNAL_ID_TAKEN', `Another ${noun} of this organization (possibly in the trash) already has this externalId`, {
    errors: [{ field: 'externalId', code: 'taken', message: `is already used by another ${noun}` }],
  });
}

/**
 * Runs a store write and turns a violation of the `<table>_external_id` unique index into EXTERNAL_ID_TAKEN:
 * the index, not a prior read, settles two concurrent writers of one external id.
 */
export async function guardExternalId<T>(noun: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err) && /external_id/.test(String((err as Error).message))) throw externalIdTaken(noun);
    throw err;
  }
}

/**
 * The lock keys (db/key-locks.ts) of the external ids that writes set: `scope` is where they are unique, the
 * organization (records: organization/object slug). A null or absent one sets nothing.
 */
export function externalIdKeys(table: TrashTable, scope: string, inputs: readonly { externalId?: unknown }[]): LockKey[] {
  return inputs.flatMap(({ externalId }) => (typeof externalId === 'string' ? [{ scope, kind: `${table}.external_id`, value: externalId }] : []));
}
