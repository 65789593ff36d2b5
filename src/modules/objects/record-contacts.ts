import type { BlindIndex } from '../../crypto/blind-index.js';
import type { Definition } from './definition.js';
import { own } from '../../lib/own.js';

/** The blind indexes of a record's e-mail and phone values (in their stored, normalized form, in clear). */
export function recordContactIndexes(blindIndex: BlindIndex, organizationId: string, definition: Definition, values: Record<string, unknown>): string[] {
  return definition.fields.flatMap((f) => {
    const value = own(values, f.key);
    if ((f.type !== 'email' && f.type !== 'phone') || typeof value !== 'string') return [];
    return [blindIndex.compute(f.type, organizationId, value)];
  });
}
