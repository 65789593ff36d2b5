import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/database.js';
import { deleteRow, setDeletedAt, type PurgedRow, type TrashTable, type TrashView } from '../../db/trash.js';
import { notFound } from '../../errors.js';
import { buildEvent, type Changes } from '../events/events.js';
import { recordEvent } from '../events/outbox.store.js';
import type { Actor } from '../orgs/principal.js';
import type { Caller } from './caller.js';
import { removeRecordDependents } from '../objects/records.purge.js';
import { removeDerived } from '../privacy/derived.service.js';
import { checkCondition, lockForCondition, type WriteOptions } from './precondition.js';
import { attachedTo, deleteAttached, followTarget } from './attached.store.js';

/**
 * Delete, restore and permanent delete (contract §7) for every resource: a resource says how to find and
 * present one of its items; the rules (404s, retention, events) are written once, here.
 */

export type TrashObject = 'lead' | 'account' | 'deal' | 'record' | 'note' | 'task';
export const TRASH_TABLES: Record<TrashObject, TrashTable> = { lead: 'leads', account: 'accounts', deal: 'deals', record: 'records', note: 'notes', task: 'tasks' };

type Ctx = Pick<AppContext, 'clock' | 'config' | 'database' | 'entityTagger'>;
export type Trashed<V> = V & { deletedAt: string | null };

export interface Trashable<S extends { deletedAt: string | null }, V> {
  object: TrashObject;
  /** For messages: "Lead", "Record". */
  label: string;
  /** Records: the slug of their object, carried by their events. */
  objectSlug?: string;
  /** One item of the caller's organization (and object) in the given view, or undefined. */
  find(db: Executor, id: string, view: TrashView): Promise<S | undefined>;
  present(stored: S): Trashed<V>;
  /** Runs once the item is in the trash (a record's reminder is dropped). */
  trashed?(trx: Executor, stored: S): Promise<void>;
  /** Runs before the item is removed for good: rows that reference it (a record's reminder) go first. */
  purging?(trx: Executor, stored: S): Promise<void>;
  /** Runs just before a trashed item is live again (a lead's duplicate check, a record's reminder). */
  restored?(trx: Executor, stored: S): Promise<S>;
}

/** Which items a list shows: `deleted=true` lists the trash. */
export const listView = (query: { deleted?: boolean | undefined }): TrashView => (query.deleted === true ? 'trash' : 'live');

/** A list's order when `sort` is not given: newest first; the trash newest deletion first. */
export const defaultSort = (view: TrashView): string => (view === 'trash' ? '-deletedAt' : '-createdAt');

/** Items that notes and tasks hang on (everything but notes and tasks themselves). */
const carriesAttached = (object: TrashObject): boolean => object !== 'note' && object !== 'task';

const EMPTY: Changes = { before: {}, after: {} };

export function trashEvent(type: 'deleted' | 'restored' | 'purged', object: TrashObject, item: { id: string; organizationId: string; objectSlug?: string | undefined }, actor: Actor, now: Date, changes: Changes = EMPTY) {
  const label = object[0]!.toUpperCase() + object.slice(1);
  return buildEvent({
    type: `${object}.${type}`,
    organizationId: item.organizationId,
    object,
    objectId: item.id,
    ...(item.objectSlug !== undefined ? { objectSlug: item.objectSlug } : {}),
    description: `${label} ${type === 'purged' ? 'removed for good' : type}`,
    changes,
    actor,
    now,
  });
}

/** The point after which a trashed item can no longer be restored (and the scheduler purges it). */
export function retentionCutoff(ctx: Pick<Ctx, 'clock' | 'config'>): string {
  return new Date(ctx.clock.now().getTime() - ctx.config.trashRetentionDays * 86_400_000).toISOString();
}

/** The item in `view`, its row locked first when the write is conditional (If-Match). */
async function findForWrite<S extends { deletedAt: string | null }, V>(ctx: Ctx, trx: Executor, caller: Caller, r: Trashable<S, V>, id: string, view: TrashView, opts: WriteOptions): Promise<S | undefined> {
  await lockForCondition(ctx, trx, TRASH_TABLES[r.object], caller.organizationId, id, opts);
  return r.find(trx, id, view);
}

/** Moves a live item to the trash; a trashed or unknown one is 404. Records `<object>.deleted`. */
export async function trashItem<S extends { deletedAt: string | null }, V>(ctx: Ctx, trx: Executor, caller: Caller, r: Trashable<S, V>, id: string, opts: WriteOptions = {}): Promise<Trashed<V>> {
  const current = await findForWrite(ctx, trx, caller, r, id, 'live', opts);
  if (!current) throw notFound(r.label);
  checkCondition(ctx, opts, r.object, r.present(current));
  const now = ctx.clock.now();
  const deletedAt = now.toISOString();
  if (!(await setDeletedAt(trx, TRASH_TABLES[r.object], caller.organizationId, id, deletedAt))) throw notFound(r.label);
  if (carriesAttached(r.object)) await followTarget(trx, caller.organizationId, id, deletedAt);
  await r.trashed?.(trx, current);
  const changes = { before: { deletedAt: null }, after: { deletedAt } };
  await recordEvent(trx, trashEvent('deleted', r.object, { id, organizationId: caller.organizationId, objectSlug: r.objectSlug }, caller.actor, now, changes));
  return { ...r.present(current), deletedAt };
}

/**
 * Brings a trashed item back while the retention lasts. A live item, one trashed longer than
 * TRASH_RETENTION_DAYS (about to be purged) or an unknown one is 404. Records `<object>.restored`.
 */
export async function restoreItem<S extends { deletedAt: string | null }, V>(ctx: Ctx, trx: Executor, caller: Caller, r: Trashable<S, V>, id: string, opts: WriteOptions = {}): Promise<Trashed<V>> {
  const current = await findForWrite(ctx, trx, caller, r, id, 'trash', opts);
  if (!current || current.deletedAt! < retentionCutoff(ctx)) throw notFound(r.label);
  checkCondition(ctx, opts, r.object, r.present(current));
  const restored = r.restored ? await r.restored(trx, current) : current;
  if (!(await setDeletedAt(trx, TRASH_TABLES[r.object], caller.organizationId, id, null))) throw notFound(r.label);
  if (carriesAttached(r.object)) await followTarget(trx, caller.organizationId, id, null);
  const changes = { before: { deletedAt: current.deletedAt }, after: { deletedAt: null } };
  await recordEvent(trx, trashEvent('restored', r.object, { id, organizationId: caller.organizationId, objectSlug: r.objectSlug }, caller.actor, ctx.clock.now(), changes));
  return r.present({ ...restored, deletedAt: null });
}

/**
 * The notes and tasks on items removed for good (purged, or erased) go with them, each recorded as
 * `note.purged` / `task.purged` (ids only), so a subscriber mirroring them drops them too.
 */
export async function purgeAttached(trx: Executor, organizationId: string, itemIds: readonly string[], actor: Actor, now: Date): Promise<void> {
  const attached = await attachedTo(trx, organizationId, itemIds);
  await deleteAttached(trx, organizationId, attached);
  for (const id of attached.notes) await recordEvent(trx, trashEvent('purged', 'note', { id, organizationId }, actor, now));
  for (const id of attached.tasks) await recordEvent(trx, trashEvent('purged', 'task', { id, organizationId }, actor, now));
}

/**
 * Removes rows for good with what hangs on them, and records `<object>.purged` for each (ids only). Nothing that
 * names a removed item outlives it (privacy/derived.service.ts): its earlier events leave the feed and the webhook
 * log, and a replayed Idempotency-Key no longer returns it.
 */
export async function recordPurged(trx: Executor, ctx: Pick<AppContext, 'database' | 'cipher'>, object: TrashObject, rows: readonly PurgedRow[], actor: Actor, now: Date): Promise<void> {
  const slugs = object === 'record' && rows.length > 0 ? await removeRecordDependents(trx, ctx.database.dialect, rows) : new Map<string, string>();
  const byOrganization = new Map<string, string[]>();
  for (const row of rows) byOrganization.set(row.organizationId, [...(byOrganization.get(row.organizationId) ?? []), row.id]);
  for (const [organizationId, ids] of byOrganization) {
    const attached = carriesAttached(object) ? await attachedTo(trx, organizationId, ids) : { notes: [], tasks: [] };
    await removeDerived(ctx, trx, organizationId, [...ids, ...attached.notes, ...attached.tasks]);
  }
  for (const row of rows) await recordEvent(trx, trashEvent('purged', object, { ...row, objectSlug: slugs.get(row.id) }, actor, now));
  if (!carriesAttached(object)) return;
  for (const [organizationId, ids] of byOrganization) await purgeAttached(trx, organizationId, ids, actor, now);
}

/**
 * How a resource's delete is asked for. `trashedOnly` (with `permanent`): only an item in the trash is removed, a
 * live one is 404 — the console's Delete for good, offered on the Trash pages only.
 */
export interface DeleteOptions extends WriteOptions {
  trashedOnly?: boolean;
}

/**
 * `?permanent=true`: removes a live or trashed item at once (`trashedOnly`: a trashed one). Answers it as it was,
 * `deletedAt` set to now.
 */
export async function purgeItem<S extends { deletedAt: string | null }, V>(ctx: Ctx & Pick<AppContext, 'cipher'>, trx: Executor, caller: Caller, r: Trashable<S, V>, id: string, opts: DeleteOptions = {}): Promise<Trashed<V>> {
  const view: TrashView = opts.trashedOnly ? 'trash' : 'any';
  const current = await findForWrite(ctx, trx, caller, r, id, view, opts);
  if (!current) throw notFound(r.label);
  checkCondition(ctx, opts, r.object, r.present(current));
  await r.purging?.(trx, current);
  const removed = await deleteRow(trx, TRASH_TABLES[r.object], caller.organizationId, id, view);
  if (!removed) throw notFound(r.label);
  const now = ctx.clock.now();
  await recordPurged(trx, ctx, r.object, [removed], caller.actor, now);
  return { ...r.present(current), deletedAt: current.deletedAt ?? now.toISOString() };
}
