import type { Executor } from '../../db/database.js';
import type { NotesTable } from '../../db/schema.js';
import type { EncryptedColumn } from '../../crypto/encrypted-column.js';
import { inView, type TrashView } from '../../db/trash.js';
import { equalityConditions, readColumnPage, timeRangeConditions, type ListPage } from '../../db/list-page.js';
import type { ListRequest } from '../../lib/list-request.js';
import { targetOf } from '../shared/item-target.store.js';
import type { ItemTarget } from '../shared/item-target.js';

/** A note's body is sealed bound to the note (a ciphertext moved to another note fails to open). */
export const noteBodyAad = (noteId: string): string => `notes:${noteId}:body`;
export const NOTE_ENCRYPTED_COLUMNS: EncryptedColumn[] = [{ table: 'notes', column: 'body_enc', key: ['id'], aad: (row) => noteBodyAad(String(row.id)) }];

/** A note as stored: its body still encrypted. */
export interface StoredNote {
  id: string;
  organizationId: string;
  target: ItemTarget;
  bodyEnc: string;
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
}

type Row = Omit<NotesTable, 'seq' | 'deleted_at' | 'target_deleted_at'> & { deleted_at: string | null };

export const toStoredNote = (r: Row): StoredNote => ({
  id: r.id,
  organizationId: r.organization_id,
  target: targetOf(r)!,
  bodyEnc: r.body_enc,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  deletedAt: r.deleted_at,
});

export async function insertNote(db: Executor, n: Omit<StoredNote, 'deletedAt'>): Promise<void> {
  await db
    .insertInto('notes')
    .values({ id: n.id, organization_id: n.organizationId, target_object: n.target.object, target_id: n.target.id, target_slug: n.target.objectSlug ?? null, body_enc: n.bodyEnc, created_at: n.createdAt, updated_at: n.updatedAt })
    .execute();
}

export async function findNote(db: Executor, organizationId: string, id: string, view: TrashView = 'live'): Promise<StoredNote | undefined> {
  const row = await db.selectFrom('notes').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).where(inView('notes', view)).executeTakeFirst();
  return row && toStoredNote(row);
}

export async function updateNoteBody(db: Executor, n: StoredNote): Promise<void> {
  await db.updateTable('notes').set({ body_enc: n.bodyEnc, updated_at: n.updatedAt }).where('organization_id', '=', n.organizationId).where('id', '=', n.id).execute();
}

/** The equality filters of `GET /notes`: query parameter → column. */
export const NOTE_FILTERS = { targetId: 'target_id', targetObject: 'target_object' } as const;
export type NoteFilter = Partial<Record<keyof typeof NOTE_FILTERS, string>>;

/** A page of notes (live, or the trash) in the requested sort (db/list-page.ts). */
export async function listNotes(db: Executor, organizationId: string, filter: NoteFilter, request: ListRequest, view: TrashView): Promise<ListPage<StoredNote>> {
  let q = db.selectFrom('notes').where('notes.organization_id', '=', organizationId).where(inView('notes', view));
  for (const c of [...equalityConditions('notes', NOTE_FILTERS, filter), ...timeRangeConditions('notes', request.range)]) q = q.where(c);
  const page = await readColumnPage<Row & { seq: number }>(q, 'notes', request);
  return { rows: page.rows.map(toStoredNote), pagination: page.pagination };
}

/** Every note (live or trashed) on one of the items `targetIds`: an erasure and an item's purge remove them. */
export async function notesOn(db: Executor, organizationId: string, targetIds: readonly string[]): Promise<StoredNote[]> {
  if (targetIds.length === 0) return [];
  const rows = await db.selectFrom('notes').selectAll().where('organization_id', '=', organizationId).where('target_id', 'in', [...targetIds]).orderBy('seq').execute();
  return rows.map(toStoredNote);
}
