import type { FastifyRequest } from 'fastify';
import type { ItemTarget } from '../../modules/shared/item-target.js';
import { button, csrfField, textArea } from '../components.js';
import { html, type SafeHtml } from '../html.js';
import { targetFields } from './item-target-fields.js';
import { deleteButton } from './trash.pages.js';

export const NOTES_PATH = '/admin/data/notes';

/** How a note is named where the console needs one line for it (its Trash page, a confirmation): its body's start. */
export const noteExcerpt = (body: string): string => (body.length > 60 ? `${body.slice(0, 60)}…` : body);

/** A note's Delete button on an item's timeline: to the notes' Trash page, where it can be restored. */
export const noteDelete = (request: FastifyRequest, note: { id: string; body: string }): SafeHtml => deleteButton(request, NOTES_PATH, note.id, `the note "${noteExcerpt(note.body)}"`);

/** The "Add note" form of an item's timeline: markdown, posted like POST /notes on that item (channel UI). */
export function noteForm(request: FastifyRequest, target: ItemTarget, opts: { value?: string; error?: string | undefined } = {}): SafeHtml {
  return html`<form method="post" action="${NOTES_PATH}" class="form" novalidate>
  ${csrfField(request)}${targetFields(target)}
  ${textArea({ name: 'body', label: 'Add note', hint: 'Markdown, up to 100 kB.', required: true, rows: 3, value: opts.value, error: opts.error })}
  ${button('Add note')}
</form>`;
}
