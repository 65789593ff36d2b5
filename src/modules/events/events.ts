import { newId } from '../../lib/ids.js';
import type { Actor } from '../orgs/principal.js';

export const EVENT_TYPES = [
  'lead.created',
  'lead.updated',
  'account.created',
  'account.updated',
  'deal.created',
  'deal.updated',
  'deal.stage_changed',
  'record.created',
  'record.updated',
  'record.stage_changed',
  'record.due',
  'lead.deleted',
  'lead.restored',
  'lead.purged',
  'account.deleted',
  'account.restored',
  'account.purged',
  'deal.deleted',
  'deal.restored',
  'deal.purged',
  'record.deleted',
  'record.restored',
  'record.purged',
  'lead.erased',
  'account.erased',
  'deal.erased',
  'record.erased',
  'note.created',
  'note.updated',
  'note.deleted',
  'note.restored',
  'note.purged',
  'task.created',
  'task.updated',
  'task.completed',
  'task.due',
  'task.deleted',
  'task.restored',
  'task.purged',
  'webhook.test',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export type Changes = { before: Record<string, unknown>; after: Record<string, unknown> };

/** The webhook body (contract §5): thin — what happened, to which record, what changed, who did it. */
export interface CrmEvent {
  id: string;
  type: EventType;
  createdAt: string;
  organization: string;
  data: {
    object: string;
    id: string;
    description: string;
    changes: Changes;
    actor: Actor;
    objectSlug?: string;
  };
}

/** What a contact field looks like in an event: its presence and change are reported, never its value. */
export const ENCRYPTED = '[encrypted]';

export function buildEvent(input: {
  type: EventType;
  organizationId: string;
  object: string;
  objectId: string;
  description: string;
  changes: Changes;
  actor: Actor;
  objectSlug?: string;
  now: Date;
}): CrmEvent {
  return {
    // An id like every other (lib/ids.ts): the events id index and the deliveries' (endpoint, event) key grow at
    // their end instead of writing a random page per row.
    id: `evt_${newId(input.now)}`,
    type: input.type,
    createdAt: input.now.toISOString(),
    organization: input.organizationId,
    data: {
      object: input.object,
      id: input.objectId,
      description: input.description,
      changes: input.changes,
      actor: input.actor,
      ...(input.objectSlug !== undefined ? { objectSlug: input.objectSlug } : {}),
    },
  };
}

/** Values as an event compares them: by their JSON (custom values may be arrays or objects), primitives directly. */
const sameValue = (a: unknown, b: unknown) => a === b || ((typeof a === 'object' || typeof b === 'object') && JSON.stringify(a) === JSON.stringify(b));

/**
 * The before/after of the fields that differ between two snapshots; fields named in `sensitive` are
 * reported as "[encrypted]" (or null when absent) so an event never carries an e-mail or phone.
 */
export function diffChanges<T extends Record<string, unknown>>(
  before: T | null,
  after: T,
  fields: readonly (keyof T & string)[],
  sensitive: readonly string[] = [],
): Changes {
  const changes: Changes = { before: {}, after: {} };
  const show = (field: string, value: unknown) => (sensitive.includes(field) && value !== null && value !== undefined ? ENCRYPTED : value ?? null);
  for (const field of fields) {
    const was = before?.[field] ?? null;
    const now = after[field] ?? null;
    if (before !== null && sameValue(was, now)) continue;
    if (before === null && now === null) continue;
    if (before !== null) changes.before[field] = show(field, was);
    changes.after[field] = show(field, now);
  }
  return changes;
}
