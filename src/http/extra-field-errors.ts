import type { FastifyRequest } from 'fastify';
import type { FieldError } from '../errors.js';

/**
 * Field errors a route's preValidation hook found in the parts of a body its schema leaves open (custom field
 * values of leads, accounts and deals): reported in the same 400 as the schema's own errors, so that one answer
 * lists every bad field. When the schema passes, the service raises them itself.
 */
const found = new WeakMap<FastifyRequest, FieldError[]>();

export function addFieldErrors(request: FastifyRequest, errors: readonly FieldError[]): void {
  if (errors.length) found.set(request, [...(found.get(request) ?? []), ...errors]);
}

export const extraFieldErrors = (request: FastifyRequest): FieldError[] => found.get(request) ?? [];
