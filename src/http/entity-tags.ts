import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod, RouteOptions } from 'fastify';
import type { EntityTagger } from '../crypto/entity-tag.js';
import { etagMatches } from '../lib/etag.js';
import { errorResponse } from './openapi-responses.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route answers one resource, under this key of `data` (`lead` → `data.lead`): the answer carries its
     * `ETag`, a GET honours `If-None-Match` (304).
     */
    etag?: string;
    /**
     * Fields of the resource that only this answer shows (a webhook's `secret`, once), left out of its tag so
     * that it is the one a GET answers.
     */
    etagOmits?: readonly string[];
    /** The write honours `If-Match` (the service compares it in the write's transaction; 412 on a mismatch). */
    ifMatch?: boolean;
  }
}

const IfNoneMatch = Type.String({
  description: 'A tag (or several, comma-separated) from an earlier ETag: when the resource still has it, the answer is 304 with no body. Compared weakly (`W/` ignored).',
});
const IfMatch = Type.String({
  description:
    'The ETag of the version you read: the write happens only if the resource still has it (strong comparison; `*` matches any existing one), else 412 PRECONDITION_FAILED with the current resource in `data`.',
});

type Schema = { headers?: { properties?: Record<string, TSchema> }; response?: Record<string, unknown> } & Record<string, unknown>;

/** Adds a header parameter to a route's `headers` schema, keeping what the route declared. */
function withHeader(schema: Schema, name: string, value: TSchema): void {
  const declared = schema.headers;
  schema.headers = Type.Object({ ...(declared?.properties ?? {}), [name]: Type.Optional(value) });
}

/**
 * What a route with `config.etag` or `config.ifMatch` documents: the header it honours, 304 or 412, and the
 * ETag header of its answer when that answer is the resource (openapi-document.ts).
 */
function document(route: RouteOptions, isGet: boolean, tagsAnswer: boolean, ifMatch: boolean): void {
  if (!route.schema || route.schema.hide) return;
  const schema = route.schema as Schema;
  if (tagsAnswer) schema['x-etag'] = true;
  const response = (schema.response ??= {});
  if (isGet) {
    withHeader(schema, 'if-none-match', IfNoneMatch);
    response[304] = { type: 'null', description: 'Not modified: the resource still has the tag sent in If-None-Match. No body.' };
  }
  if (ifMatch) {
    withHeader(schema, 'if-match', IfMatch);
    response[412] = errorResponse('PreconditionFailed');
  }
}

/** The resource as its tag covers it: without the fields `config.etagOmits` names. */
function taggedPart(resource: unknown, omits: readonly string[]): unknown {
  if (omits.length === 0 || resource === null || typeof resource !== 'object') return resource;
  return Object.fromEntries(Object.entries(resource).filter(([field]) => !omits.includes(field)));
}

/**
 * The answer of a one-resource route gets the resource's ETag (computed once, from the object the handler
 * returns, before serialization); a GET whose If-None-Match names it answers 304 without a body.
 */
function tagged(tagger: EntityTagger, handler: RouteHandlerMethod, key: string, omits: readonly string[], isGet: boolean): RouteHandlerMethod {
  return async function (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
    const payload: unknown = await handler.call(this, request, reply);
    const resource = (payload as { data?: Record<string, unknown> } | undefined)?.data?.[key];
    if (resource === undefined || reply.sent) return payload;
    const etag = tagger.tagOf(taggedPart(resource, omits));
    reply.header('etag', etag);
    const ifNoneMatch = request.headers['if-none-match'];
    if (isGet && ifNoneMatch !== undefined && etagMatches(ifNoneMatch, etag, 'weak')) return reply.code(304).send();
    return payload;
  };
}

/**
 * Entity tags (contract §8, optimistic concurrency) for every route that declares `config.etag`: one place
 * rather than code in each handler, and no cost on the routes that don't (lists, the feed).
 */
export function registerEntityTags(app: FastifyInstance, tagger: EntityTagger): void {
  app.addHook('onRoute', (route) => {
    const config = route.config as { etag?: string; etagOmits?: readonly string[]; ifMatch?: boolean } | undefined;
    if (!config?.etag && config?.ifMatch !== true) return;
    const isGet = route.method === 'GET' || (Array.isArray(route.method) && route.method.includes('GET'));
    document(route, isGet, config.etag !== undefined, config.ifMatch === true);
    // A route that answers no resource (a deletion's stub) takes If-Match without tagging its answer.
    if (config.etag) route.handler = tagged(tagger, route.handler, config.etag, config.etagOmits ?? [], isGet);
  });
}

/** The request's If-Match, for the service to compare inside the write's transaction. */
export function ifMatchOf(request: FastifyRequest): string | undefined {
  const header = request.headers['if-match'];
  return Array.isArray(header) ? header.join(',') : header;
}
