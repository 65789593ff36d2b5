import type { Core } from '../core.js';
import type { CallOptions, CreateOptions, Query, RequestBody, ResponseData, Schema, Written } from '../types.js';
import { listing } from './listing.js';
import { trashing } from './trash.js';

const NOTES = '/api/public/v1/notes';
const NOTE = '/api/public/v1/notes/{id}';
const RESTORE = '/api/public/v1/notes/{id}/restore';

export type Note = Schema<'Note'>;
export type NoteCreate = RequestBody<typeof NOTES, 'post'>;
export type NoteQuery = Query<typeof NOTES, 'get'>;
export type NotePage = ResponseData<typeof NOTES, 'get'>;

/** Markdown notes on a lead, account, deal or record: `crm.notes.create({target: {object: 'lead', id}, body})`. */
export function notesResource(core: Core) {
  return {
    create: async (body: NoteCreate, opts?: CreateOptions): Promise<Note> => (await core.create(NOTES, body, opts)).note,
    get: async (id: string, opts?: CallOptions): Promise<Note> => (await core.call(NOTE, 'get', { params: { id } }, opts)).note,
    /** Replaces the body (a note keeps its target). */
    update: async (id: string, body: string, opts?: CallOptions): Promise<Written<Note>> => (await core.call(NOTE, 'patch', { params: { id }, body: { body } }, opts)).note,
    ...listing((query: NoteQuery, opts?: CallOptions) => core.call(NOTES, 'get', { query }, opts), (page) => page.notes),
    ...trashing<Written<Note>>(
      async (id, query, opts) => (await core.call(NOTE, 'delete', { params: { id }, query }, opts)).note,
      async (id, opts) => (await core.call(RESTORE, 'post', { params: { id } }, opts)).note,
    ),
  };
}
