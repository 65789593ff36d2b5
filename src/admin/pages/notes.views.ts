import type { FastifyRequest } from 'fastify';
import type { ItemTarget } from '../../modules/shared/item-target.js';
import { button, csrfField, textArea } from '../components.js';
import { html, type SafeHtml } from '../html.js';
import { targetFields } from './item-target-fields.js';

export const NOTES_PATH = '/admin/data/notes';

/** The "Add note" form of an item's timeline: markdown, posted like POST /notes on that item (channel UI). */
export function noteForm(request: FastifyRequest, target: ItemTarget, opts: { value?: string; error?: string | undefined } = {}): SafeHtml {
  return html`<form method="post" action="${NOTES_PATH}" class="form" novalidate>
  ${csrfField(request)}${targetFields(target)}
  ${textArea({ name: 'body', label: 'Add note', hint: 'Markdown, up to 100 kB.', required: true, rows: 3, value: opts.value, error: opts.error })}
  ${button('Add note')}
</form>`;
}
