import type { FastifyRequest } from 'fastify';
import { AppError, validationFailed, type FieldError } from '../errors.js';
import { validateValue } from '../http/validation.js';
import { own } from '../lib/own.js';

/** A urlencoded form as @fastify/formbody parses it: repeated names (checkboxes) become arrays. */
export type FormBody = Record<string, string | string[] | undefined>;

export function formBody(request: FastifyRequest): FormBody {
  return request.body && typeof request.body === 'object' ? (request.body as FormBody) : {};
}

/** The field's value as text ('' when absent; the first value when repeated). */
export function text(body: FormBody, name: string): string {
  const v = own(body, name);
  return typeof v === 'string' ? v : Array.isArray(v) ? (v[0] ?? '') : '';
}

export function list(body: FormBody, name: string): string[] {
  const v = own(body, name);
  return typeof v === 'string' ? [v] : Array.isArray(v) ? v : [];
}

/** Blank optional inputs mean "not given" on create… */
export function orUndefined(value: string): string | undefined {
  return value.trim() === '' ? undefined : value;
}

/** …and "clear it" on edit. */
export function orNull(value: string): string | null {
  return value.trim() === '' ? null : value;
}

export function queryText(request: FastifyRequest, name: string): string {
  const v = (request.query as Record<string, unknown>)[name];
  return typeof v === 'string' ? v : '';
}

/** A positive page number from the query; anything else is page 1. */
export function queryPage(request: FastifyRequest): number {
  const n = Number(queryText(request, 'page'));
  return Number.isInteger(n) && n >= 1 && n <= 100_000 ? n : 1;
}

/** Field → message, shown next to each input and in the summary at the top of the form. */
export type FieldMessages = Record<string, string>;

export interface FormProblem {
  fields: FieldMessages;
  /** A failure that belongs to no single field (a conflict, a vanished record). */
  message?: string;
}

/**
 * The API's own validation messages, reused: a service's AppError becomes per-field messages. `fieldOf`
 * maps service field paths onto form inputs; `conflict` places a CONFLICT (e.g. an e-mail already used) on
 * the input it is about. Anything that isn't an AppError is a bug and goes to the error page.
 */
export function problemOf(
  err: unknown,
  opts: { fieldOf?: (field: string) => string; conflict?: { field: string; message: string } } = {},
): FormProblem {
  if (!(err instanceof AppError) || err.status >= 500) throw err;
  if (err.code === 'CONFLICT' && opts.conflict) return { fields: { [opts.conflict.field]: opts.conflict.message } };
  if (err.code !== 'VALIDATION_FAILED' || !err.errors?.length) return { fields: {}, message: err.message };
  return { fields: fieldMessages(err.errors, opts.fieldOf) };
}

/** A service's field errors as one message per form input (several on one input are joined). */
export function fieldMessages(errors: readonly FieldError[], fieldOf: (field: string) => string = (f) => f): FieldMessages {
  const fields: FieldMessages = {};
  for (const e of errors) {
    const field = fieldOf(e.field);
    fields[field] = fields[field] ? `${fields[field]}; ${e.message}` : e.message;
  }
  return fields;
}

/**
 * The API's schema checks on a body built from a form (every bad field, with the API's messages), before
 * the service applies its own rules; so the console shows exactly what the API would answer. `extra` are
 * problems found in the parts the schema leaves open (custom values), reported in the same 400 as the API does.
 */
export function checkedBody<T>(schema: object, body: Record<string, unknown>, extra: readonly FieldError[] = []): T {
  const errors = [...validateValue(schema, body, 'body'), ...extra];
  if (errors.length) throw validationFailed(errors);
  return body as T;
}

/** Leaves out the entries whose value is undefined (blank optional inputs on create). */
export function defined(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined));
}
