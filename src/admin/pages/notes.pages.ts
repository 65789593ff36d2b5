import { inTransaction } from '../../db/transaction.js';
import { CreateNoteBody } from '../../modules/notes/notes.schemas.js';
import { createNote } from '../../modules/notes/notes.service.js';
import { errorSummary } from '../components.js';
import { checkedBody, formBody, problemOf, text } from '../forms.js';
import { html } from '../html.js';
import { pageNotFound } from '../errors.js';
import { callerOfViewer, viewerOf, type AdminModule } from '../module.js';
import { submittedTarget } from './item-target-fields.js';
import { noteForm } from './notes.views.js';

/**
 * The "Add note" form of every item's timeline posts here: the note is created through the same service as
 * POST /notes (its checks, note.created with channel UI), then the item's page shows it. A refused note
 * (empty, over 100 kB, an item gone meanwhile) comes back on a page of its own with the text kept.
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
  },
};
