import type { ItemTarget } from '../../modules/shared/item-target.js';
import { text, type FormBody } from '../forms.js';
import { html, type SafeHtml } from '../html.js';

/** The hidden inputs naming the item a timeline form (a note, a task) is for: its kind, id and object's slug. */
export function targetFields(target: ItemTarget): SafeHtml {
  return html`<input type="hidden" name="object" value="${target.object}"><input type="hidden" name="id" value="${target.id}">${
    target.objectSlug ? html`<input type="hidden" name="objectSlug" value="${target.objectSlug}">` : ''}`;
}

/** The item a submitted timeline form names, as the API's `target` (checked by the service like any body). */
export function submittedTarget(body: FormBody): ItemTarget {
  const slug = text(body, 'objectSlug');
  return { object: text(body, 'object'), id: text(body, 'id'), ...(slug ? { objectSlug: slug } : {}) } as ItemTarget;
}
