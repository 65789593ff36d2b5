import type { FastifySchema, RouteOptions } from 'fastify';
import type { SwaggerTransformObject } from '@fastify/swagger';
import { exampleOf } from './openapi-examples.js';
import { deriveOperationId } from './openapi-operation-ids.js';
import { namedErrorOf, namedErrorResponses, RESPONSE_HEADERS, responseHeaders } from './openapi-responses.js';

type Json = Record<string, unknown>;
interface Response { description?: string; headers?: Json; content?: Record<string, { schema?: Json; example?: unknown }>; $ref?: string }
/** `x-etag`: set by http/entity-tags.ts on the routes of one resource, whose answers carry its ETag. */
interface Operation { operationId?: string; security?: unknown[]; parameters?: { in?: string; name?: string }[]; responses: Record<string, Response>; 'x-etag'?: boolean }
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Json; responses?: Json; headers?: Json };
  security?: unknown[];
  webhooks?: Json;
}

/**
 * @fastify/swagger's per-route `transform`: names the operation after its method and path unless the route's
 * schema names it (`schema.operationId`), so routes added later are named without their help.
 */
export function withOperationId(prefix: string) {
  return ({ schema, url, route }: { schema: FastifySchema; url: string; route: RouteOptions }) => {
    const method = Array.isArray(route.method) ? route.method[0]! : route.method;
    const named = schema as FastifySchema & { operationId?: string };
    if (!schema || named.operationId) return { schema, url };
    return { schema: { ...schema, operationId: deriveOperationId(method, url, prefix) }, url };
  };
}

const STATUS_TEXT: Record<string, string> = { '200': 'OK', '201': 'Created', '202': 'Accepted', '204': 'No content' };

const PARTICIPLE: Record<string, string> = { post: 'created', patch: 'updated', put: 'replaced', delete: 'deleted' };

/**
 * "A page of leads", "The created lead", "The updated lead": read off the success envelope's `data` (a route
 * may describe its response itself with `description` on the response schema).
 */
function successDescription(method: string, status: string, response: Response): string {
  const data = (response.content?.['application/json']?.schema?.properties as Json | undefined)?.data as { properties?: Json } | undefined;
  const keys = Object.keys(data?.properties ?? {});
  const items = keys.find((k) => k !== 'pagination');
  if (keys.includes('pagination') && items) return `A page of ${items}.`;
  const done = status === '201' || method !== 'post' ? PARTICIPLE[method] : undefined;
  if (keys.length === 1) return `The ${done ? `${done} ` : ''}${keys[0]}.`;
  return STATUS_TEXT[status] ?? 'Success.';
}

/** Shared error responses by reference, success responses described with an example, every response with its headers. */
function finishOperation(method: string, operation: Operation, doc: Pick<Document, 'security' | 'components'>, usedErrors: Set<string>): void {
  const authenticated = (operation.security ?? doc.security ?? []).length > 0;
  const tagged = operation['x-etag'] === true;
  delete operation['x-etag'];
  const idempotent = (operation.parameters ?? []).some((p) => p.in === 'header' && p.name?.toLowerCase() === 'idempotency-key');
  for (const [status, response] of Object.entries(operation.responses)) {
    const shared = namedErrorOf(response);
    if (shared) {
      usedErrors.add(shared);
      operation.responses[status] = { $ref: `#/components/responses/${shared}` };
      continue;
    }
    if (response.$ref) continue;
    if (response.description === 'Default Response') response.description = successDescription(method, status, response);
    const body = response.content?.['application/json'];
    if (body && body.example === undefined) body.example = exampleOf(body.schema, doc.components.schemas);
    response.headers = { ...responseHeaders(status, authenticated, tagged, idempotent), ...response.headers };
  }
}

/** The event bodies the document describes as its `webhooks` section, handed in by the module that owns them. */
export interface WebhookEvents {
  schema: Json;
  section(schemaRef: string): Json;
}

/**
 * @fastify/swagger's `transformObject`, run once when the document is first built (then cached): shared
 * error responses and headers, response headers on every operation, and the webhook events.
 */
export const finishDocument =
  (events: WebhookEvents): SwaggerTransformObject =>
  (input) => {
    if (!('openapiObject' in input)) return input.swaggerObject;
    const doc = input.openapiObject as unknown as Document;
    const usedErrors = new Set<string>();
    for (const operations of Object.values(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) finishOperation(method, operation, doc, usedErrors);
    }
    doc.components.headers = { ...RESPONSE_HEADERS };
    doc.components.responses = namedErrorResponses(usedErrors);
    doc.components.schemas.WebhookEvent = events.schema;
    doc.webhooks = events.section('#/components/schemas/WebhookEvent');
    return input.openapiObject;
  };
