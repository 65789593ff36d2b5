import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/database.js';
import { notFound, validationFailed } from '../../errors.js';
import { newId } from '../../lib/ids.js';
import { listRequest } from '../../lib/list-request.js';
import { listCursors } from '../../crypto/list-cursors.js';
import { buildEvent, diffChanges, type EventType } from '../events/events.js';
import { recordEvent } from '../events/outbox.store.js';
import type { Caller } from '../shared/caller.js';
import { checkTarget } from '../shared/item-target.js';
import { defaultSort, listView, purgeItem, restoreItem, trashItem, type DeleteOptions, type Trashable } from '../shared/trash.service.js';
import { checkCondition, lockForCondition, type WriteOptions } from '../shared/precondition.js';
import { MAX_NOTE_BYTES, type CreateNoteBody, type ListNotesQuery, type Note, type UpdateNoteBody } from './notes.schemas.js';
import { findNote, insertNote, listNotes as listStored, noteBodyAad, updateNoteBody, type StoredNote } from './notes.store.js';

type Ctx = Pick<AppContext, 'database' | 'cipher' | 'clock' | 'entityTagger'>;

/** The body is personal data: events report that it changed ("[encrypted]"), never what it says. */
const EVENT_FIELDS = ['target', 'body'] as const;
const SENSITIVE = ['body'];

export function toNote(ctx: Pick<Ctx, 'cipher'>, s: StoredNote): Note {
  return { id: s.id, target: s.target, body: ctx.cipher.decrypt(s.bodyEnc, noteBodyAad(s.id)), createdAt: s.createdAt, updatedAt: s.updatedAt, deletedAt: s.deletedAt };
}

/** JSON Schema counts characters; the 100 kB limit is on the UTF-8 bytes. */
function checkBodySize(body: string): void {
  if (Buffer.byteLength(body, 'utf8') > MAX_NOTE_BYTES) throw validationFailed([{ field: 'body', code: 'too_long', message: `must be at most ${MAX_NOTE_BYTES} bytes of UTF-8 (100 kB)` }]);
}

async function emit(trx: Executor, caller: Caller, type: EventType, note: Note, description: string, changes: ReturnType<typeof diffChanges>, now: Date) {
  await recordEvent(trx, buildEvent({ type, organizationId: caller.organizationId, object: 'note', objectId: note.id, description, changes, actor: caller.actor, now }));
}

/** Stores the note on a live item of the organization and records note.created, in the caller's transaction. */
export async function createNote(ctx: Ctx, trx: Executor, caller: Caller, input: CreateNoteBody): Promise<Note> {
  checkBodySize(input.body);
  await checkTarget(trx, caller.organizationId, input.target);
  const now = ctx.clock.now();
  const id = newId(now);
  const stored: StoredNote = {
    id,
    organizationId: caller.organizationId,
    target: input.target,
    bodyEnc: ctx.cipher.encrypt(input.body, noteBodyAad(id)),
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
    deletedAt: null,
  };
  await insertNote(trx, stored);
  const note = toNote(ctx, stored);
  await emit(trx, caller, 'note.created', note, `Note added to ${note.target.object} ${note.target.id}`, diffChanges(null, note, EVENT_FIELDS, SENSITIVE), now);
  return note;
}

export async function getNote(ctx: Ctx, organizationId: string, id: string): Promise<Note> {
  const stored = await findNote(ctx.database.db, organizationId, id);
  if (!stored) throw notFound('Note');
  return toNote(ctx, stored);
}

export async function listNotes(ctx: Ctx & Pick<AppContext, 'cursorSeal'>, organizationId: string, query: ListNotesQuery) {
  const view = listView(query);
  const filter = { targetId: query.targetId, targetObject: query.targetObject };
  const { rows, pagination } = await listStored(ctx.database.db, organizationId, filter, listRequest(query, listCursors(ctx, organizationId), defaultSort(view)), view);
  return { notes: rows.map((n) => toNote(ctx, n)), pagination };
}

/** A new body records note.updated; the same body changes nothing. */
export async function updateNote(ctx: Ctx, trx: Executor, caller: Caller, id: string, patch: UpdateNoteBody, opts: WriteOptions = {}): Promise<Note> {
  checkBodySize(patch.body);
  await lockForCondition(ctx, trx, 'notes', caller.organizationId, id, opts);
  const current = await findNote(trx, caller.organizationId, id);
  if (!current) throw notFound('Note');
  const before = toNote(ctx, current);
  checkCondition(ctx, opts, 'note', before);
  if (before.body === patch.body) return before;
  const now = ctx.clock.now();
  const next: StoredNote = { ...current, bodyEnc: ctx.cipher.encrypt(patch.body, noteBodyAad(id)), updatedAt: now.toISOString() };
  await updateNoteBody(trx, next);
  const after: Note = { ...before, body: patch.body, updatedAt: next.updatedAt };
  await emit(trx, caller, 'note.updated', after, 'Note updated: body', diffChanges(before, after, EVENT_FIELDS, SENSITIVE), now);
  return after;
}

function trashableNotes(ctx: Ctx, organizationId: string): Trashable<StoredNote, Note> {
  return { object: 'note', label: 'Note', find: (db, id, view) => findNote(db, organizationId, id, view), present: (s) => toNote(ctx, s) };
}

/** DELETE /notes/{id}: to the trash (note.deleted), or for good with `permanent` (note.purged). */
export function deleteNote(ctx: Ctx & Pick<AppContext, 'config'>, trx: Executor, caller: Caller, id: string, permanent: boolean, opts: DeleteOptions = {}): Promise<Note> {
  return (permanent ? purgeItem : trashItem)(ctx, trx, caller, trashableNotes(ctx, caller.organizationId), id, opts);
}

export function restoreNote(ctx: Ctx & Pick<AppContext, 'config'>, trx: Executor, caller: Caller, id: string, opts: WriteOptions = {}): Promise<Note> {
  return restoreItem(ctx, trx, caller, trashableNotes(ctx, caller.organizationId), id, opts);
}
