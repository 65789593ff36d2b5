import { inTransaction } from '../../db/transaction.js';
import { CreateNoteBody } from '../../modules/notes/notes.schemas.js';
import { createNote, deleteNote, listNotes, restoreNote } from '../../modules/notes/notes.service.js';
import { DEFAULT_LIMIT } from '../../lib/pagination.js';
import { errorSummary } from '../components.js';
import { checkedBody, formBody, problemOf, text } from '../forms.js';
import { html } from '../html.js';
import { pageNotFound } from '../errors.js';
import { callerOfViewer, viewerOf, type AdminModule } from '../module.js';
import { submittedTarget } from './item-target-fields.js';
import { noteExcerpt, noteForm, NOTES_PATH } from './notes.views.js';
import { registerConsoleTrash } from './trash.pages.js';

/**
 * The "Add note" form of every item's timeline posts here: the note is created through the same service as
 * POST /notes (its checks, note.created with channel UI), then the item's page shows it. A refused note
 * (empty, over 100 kB, an item gone meanwhile) comes back on a page of its own with the text kept. A note's
 * Delete button (on the timeline) moves it to the notes' Trash page, as DELETE /notes/{id} does.
 */
export const notesModule: AdminModule = {
  name: 'notes',
  nav: [],
  register(app, deps) {
    const { ctx } = deps;
    app.post('/data/notes', async (request, reply) => {
      const viewer = viewerOf(request);
      const body = formBody(request);
      const input: CreateNoteBody = { target: submittedTarget(body), body: text(body, 'body') };
      const page = deps.objectHref(input.target.object, input.target.id, input.target.objectSlug);
      if (!page) throw pageNotFound();
      try {
        const note = checkedBody<CreateNoteBody>(CreateNoteBody, input);
        await inTransaction(ctx, (trx) => createNote(ctx, trx, callerOfViewer(viewer), note));
        return reply.redirect(`${page}#history`, 303);
      } catch (err) {
        const problem = problemOf(err);
        return deps.render(request, reply, {
          title: 'Add note',
          crumbs: ['Data'],
          status: 400,
          body: html`${errorSummary(problem, { body: 'Note', target: 'Item' })}
${noteForm(request, input.target, { value: input.body, error: problem.fields.body })}
<p><a href="${page}">Back to the item</a></p>`,
        });
      }
    });

    registerConsoleTrash(app, deps, {
      route: '/data/notes',
      href: () => NOTES_PATH,
      title: async () => ({ title: 'Notes', crumbs: ['Data'] }),
      noun: 'note',
      trash: async (viewer, _params, page) => {
        const { notes, pagination } = await listNotes(ctx, viewer.organization.id, { page, limit: DEFAULT_LIMIT, deleted: true });
        return { items: notes.map((n) => ({ id: n.id, name: noteExcerpt(n.body), deletedAt: n.deletedAt })), pagination };
      },
      remove: (trx, caller, _params, id) => deleteNote(ctx, trx, caller, id, false),
      restore: (trx, caller, _params, id) => restoreNote(ctx, trx, caller, id),
      purge: (trx, caller, _params, id) => deleteNote(ctx, trx, caller, id, true, { trashedOnly: true }),
    });
  },
};
