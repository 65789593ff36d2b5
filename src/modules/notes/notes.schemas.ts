import { Type, type Static } from '@sinclair/typebox';
import { Envelope, Id, Timestamp } from '../../http/schemas.js';
import { Pagination } from '../../lib/pagination.js';
import { ListParams, SortQuery, TIME_SORTS } from '../../lib/list-request.js';
import { DeletedAt, TrashQuery } from '../shared/trash.routes.js';
import { ItemTarget, TARGET_OBJECTS } from '../shared/item-target.js';
import { StringEnum } from '../../http/schemas.js';
import { WrittenEnvelope } from '../shared/minimal-view.js';

/** A note's body: markdown, at most this many bytes of UTF-8 (100 kB). */
export const MAX_NOTE_BYTES = 102_400;

const body = Type.String({ minLength: 1, maxLength: MAX_NOTE_BYTES, pattern: '\\S', description: `Markdown text, at most ${MAX_NOTE_BYTES} bytes of UTF-8 (100 kB). Personal data: encrypted at rest, "[encrypted]" in events, removed by an erasure of the item it is on.` });

export const CreateNoteBody = Type.Object(
  { target: ItemTarget, body },
  { additionalProperties: false, examples: [{ target: { object: 'lead', id: '6740a1b2c3d4e5f6a7b8c9d0' }, body: 'Called: wants a demo **next week**.' }] },
);
export type CreateNoteBody = Static<typeof CreateNoteBody>;

export const UpdateNoteBody = Type.Object({ body }, { additionalProperties: false, description: 'A note keeps its target; only its body changes.' });
export type UpdateNoteBody = Static<typeof UpdateNoteBody>;

export const Note = Type.Object(
  {
    id: Id(),
    target: ItemTarget,
    body: Type.String({ description: 'Markdown text.' }),
    createdAt: Timestamp('UTC instant of creation.'),
    updatedAt: Timestamp('UTC instant of the last change.'),
    deletedAt: DeletedAt,
  },
  { $id: 'Note' },
);
export type Note = Static<typeof Note>;

export const ListNotesQuery = Type.Object(
  {
    targetId: Type.Optional(Id('Only the notes on this item.')),
    targetObject: Type.Optional(StringEnum(TARGET_OBJECTS, { description: 'Only the notes on items of this kind.' })),
    ...ListParams,
    ...SortQuery(TIME_SORTS),
    ...TrashQuery,
  },
  { additionalProperties: false },
);
export type ListNotesQuery = Static<typeof ListNotesQuery>;

export const NoteEnvelope = Envelope(Type.Object({ note: Type.Ref(Note) }));
/** The answer of a write of an existing note (update, delete, restore): the note, or its minimal view. */
export const WrittenNoteEnvelope = WrittenEnvelope('note', Type.Ref(Note));
export const NoteListEnvelope = Envelope(Type.Object({ notes: Type.Array(Type.Ref(Note)), pagination: Type.Ref(Pagination) }));
