import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { AppError, validationFailed, type FieldError } from '../errors.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Far beyond any body of this API (records are flat; the deepest schema is a few levels). */
export const MAX_JSON_DEPTH = 32;

/** True when `value` nests objects or arrays more than `max` levels deep (walked iteratively). */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth >= max) return true;
    for (const child of Object.values(current)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i;

/**
 * A body the parser would misread rather than refuse: compressed (any Content-Encoding but identity: the
 * bytes would be taken for JSON text) or declared in a charset other than UTF-8 (its bytes would be decoded
 * as UTF-8 anyway). Both are 415, naming what to send instead.
 */
function unreadableEncoding(headers: IncomingHttpHeaders): AppError | undefined {
  const encoding = headers['content-encoding']?.trim().toLowerCase();
  if (encoding && encoding !== 'identity') {
    return new AppError('UNSUPPORTED_MEDIA_TYPE', 'Compressed bodies (Content-Encoding) are not supported: send the JSON uncompressed');
  }
  const charset = CHARSET.exec(headers['content-type'] ?? '')?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    return new AppError('UNSUPPORTED_MEDIA_TYPE', 'JSON bodies must be UTF-8: send Content-Type: application/json (charset=utf-8 or none)');
  }
  return undefined;
}

/**
 * JSON bodies must be UTF-8 (RFC 8259), uncompressed (unreadableEncoding). Fastify's parser decodes leniently, turning invalid bytes (say, a
 * Latin-1 "é") into U+FFFD that would be stored as if the client had sent it; here they are refused.
 * Parsing itself stays Fastify's (prototype-poisoning checks included). Bodies nested deeper than
 * MAX_JSON_DEPTH are refused too: recursive code further on (hashing for idempotency, validation,
 * serialization) would otherwise overflow the stack on a few kilobytes of brackets.
 */
export function registerStrictJsonParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const refused = unreadableEncoding(request.headers);
    if (refused) {
      done(refused, undefined);
      return;
    }
    // Many clients send `Content-Type: application/json` on every request: an empty body on a route that takes
    // none (DELETE, restore) is no body, not bad JSON.
    if ((body as Buffer).length === 0 && request.routeOptions.schema?.body === undefined) {
      done(null, undefined);
      return;
    }
    let text: string;
    try {
      text = utf8.decode(body as Buffer);
    } catch {
      done(new AppError('INVALID_JSON', 'The body is not valid UTF-8'), undefined);
      return;
    }
    parse(request, text, (err, value) => {
      if (!err && nestedDeeperThan(value, MAX_JSON_DEPTH)) done(new AppError('INVALID_JSON', `The body is nested more than ${MAX_JSON_DEPTH} levels deep`), undefined);
      else done(err, value);
    });
  });
}

const MAX_REPORTED = 20;
/** In unicode mode a paired surrogate is one code point, so \p{Cs} matches only the unpaired ones. */
const UNSTORABLE = /[\u0000\p{Cs}]/u;

/**
 * Text that no column can store faithfully: NUL (PostgreSQL text refuses it outright) and unpaired UTF-16
 * surrogates (drivers silently turn them into U+FFFD). Returns the dotted paths of such strings in `value`,
 * walking iteratively so that deeply nested input cannot exhaust the stack.
 */
export function unstorableText(value: unknown, root: string): string[] {
  const found: string[] = [];
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length > 0 && found.length < MAX_REPORTED) {
    const [current, path] = stack.pop()!;
    if (typeof current === 'string') {
      if (UNSTORABLE.test(current)) found.push(path || root);
    } else if (current !== null && typeof current === 'object') {
      for (const [key, child] of Object.entries(current)) {
        const childPath = path ? `${path}.${key}` : key;
        if (UNSTORABLE.test(key)) found.push(childPath);
        else stack.push([child, childPath]);
      }
    }
  }
  return found;
}

/** Refuses such text anywhere in the path, query or body, as a validation error naming each field. */
export function registerTextGuard(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const fields = [
      ...unstorableText(request.params, 'params'),
      ...unstorableText(request.query, 'querystring'),
      ...unstorableText(request.body, 'body'),
    ];
    if (fields.length === 0) return;
    const errors: FieldError[] = fields.map((field) => ({
      field,
      code: 'invalid_character',
      message: 'must be valid Unicode text without NUL characters',
    }));
    throw validationFailed(errors);
  });
}
