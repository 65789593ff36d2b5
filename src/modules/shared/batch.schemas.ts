import { Type, type TSchema } from '@sinclair/typebox';
import type { ErrorCode } from '../../errors.js';
import { Envelope, FieldErrorSchema, Id, StringEnum } from '../../http/schemas.js';

/** Items per batch request (contract §8). */
export const MAX_BATCH_ITEMS = 100;

export const UPSERT_KEYS = ['externalId', 'email'] as const;
export type UpsertKey = (typeof UPSERT_KEYS)[number];

const IfMatch = Type.String({
  minLength: 1,
  maxLength: 1024,
  description: 'The item applies only if the current resource\'s ETag matches (strong comparison, `*` matches any existing one); else its result is 412 with the current resource.',
});

/** A record body takes its object's field keys: an item composed from a body is as open as the body. */
const sameAdditional = (body: TSchema) => ({ additionalProperties: (body as { additionalProperties?: boolean }).additionalProperties ?? false });

/**
 * The codes an item's own failure can have (batch.service.ts: the single-item checks and services, whose other
 * refusals — a missing key or scope, the rate limit, the Idempotency-Key, an unknown object — are the whole
 * request's, before any item runs).
 */
export const BATCH_ITEM_ERROR_CODES = ['VALIDATION_FAILED', 'NOT_FOUND', 'EXTERNAL_ID_TAKEN', 'PRECONDITION_FAILED'] as const satisfies readonly ErrorCode[];

/** An item's error: the error envelope's code, message and field errors. */
export const BatchItemError = Type.Object(
  {
    code: StringEnum(BATCH_ITEM_ERROR_CODES, {
      description:
        'VALIDATION_FAILED (400): the item is invalid, `errors` lists every bad field. NOT_FOUND (404): a PATCH item\'s id names no live item of the organization. EXTERNAL_ID_TAKEN (409): another item (possibly in the trash) holds its externalId. PRECONDITION_FAILED (412): its ifMatch is not the current ETag.',
    }),
    message: Type.String(),
    errors: Type.Optional(Type.Array(FieldErrorSchema)),
  },
  { $id: 'BatchItemError', description: 'Why one item of a batch was not applied, in the shape of the error envelope (`code`, `message`, `errors`).' },
);

const ITEM_STATUSES = [201, 200, 400, 404, 409, 412];

/** One entry of `data.results`: the item's index, its own HTTP-like status, the resource and/or the error. */
export function BatchResult(noun: string, resource: TSchema) {
  return Type.Object(
    {
      index: Type.Integer({ minimum: 0, description: 'Position of the item in `items`.' }),
      status: Type.Integer({
        enum: ITEM_STATUSES,
        description: '201 created, 200 updated (an upsert hit, or a PATCH item), 400 invalid item, 404 unknown id (PATCH), 409 externalId taken, 412 ifMatch not the current ETag.',
      }),
      [noun]: Type.Optional(resource),
      etag: Type.Optional(
        Type.String({
          description: `The ETag a \`GET\` of this ${noun} answers, present whenever \`${noun}\` is (201, 200, and the current one on 412): send it as an item's \`ifMatch\` (or as If-Match) to change only this version, without reading it again.`,
          examples: ['"k3Vq1mW0u8m1bq6cS2C3oW4n4cJ0aZp"'],
        }),
      ),
      error: Type.Optional(Type.Ref(BatchItemError)),
    },
    {
      description: `The outcome of one item: \`${noun}\` with its \`etag\` on 201 and 200 (and the current ${noun}, with its etag, on 412), \`error\` otherwise. A key that may write ${noun}s but not read them gets the minimal view of a ${noun} that existed before the batch (200, 412), with the whole ${noun}'s etag; a created one (201) whole.`,
    },
  );
}

const invalidItem = (index: number) => ({
  index,
  status: 400,
  error: { code: 'VALIDATION_FAILED', message: 'externalId: must not be empty', errors: [{ field: 'externalId', code: 'too_short', message: 'must not be empty' }] },
});

/**
 * The results a route's document shows (openapi-examples.ts, `x-example-items`), `true` standing for the
 * generated resource: POST a created item, an upsert hit and a refused item; PATCH an updated item, a 412 with
 * the current one and an unknown id.
 */
function exampleResults(noun: string, label: string, route: 'create' | 'update'): Record<string, unknown>[] {
  if (route === 'create') return [{ index: 0, status: 201, [noun]: true, etag: true }, { index: 1, status: 200, [noun]: true, etag: true }, invalidItem(2)];
  return [
    { index: 0, status: 200, [noun]: true, etag: true },
    { index: 1, status: 412, [noun]: true, etag: true, error: { code: 'PRECONDITION_FAILED', message: 'ifMatch does not match the current version; the current resource is returned' } },
    { index: 2, status: 404, error: { code: 'NOT_FOUND', message: `${label} not found` } },
  ];
}

/** The answer of `POST …/batch` (route `create`) or `PATCH …/batch` (`update`). */
export function BatchEnvelope(noun: string, label: string, resource: TSchema, route: 'create' | 'update') {
  const results = Type.Array(BatchResult(noun, resource), { description: 'One entry per item, in the order of `items`.', 'x-example-items': exampleResults(noun, label, route) });
  return Envelope(Type.Object({ results }));
}

/**
 * POST body: the items typed as create bodies, for the document and the SDK. Validation uses `looseItems` of
 * the same body instead, so that a bad item becomes that item's 400 and never fails the whole batch.
 */
export function BatchCreateBody(createBody: TSchema, upsertBy: readonly UpsertKey[], example: unknown) {
  return Type.Object(
    {
      items: Type.Array(Type.Composite([createBody, Type.Object({ ifMatch: Type.Optional(IfMatch) })], sameAdditional(createBody)), {
        minItems: 1,
        maxItems: MAX_BATCH_ITEMS,
        description: `1 to ${MAX_BATCH_ITEMS} create bodies. An item may carry \`ifMatch\` (with upsertBy) to update only the version it read.`,
      }),
      upsertBy: Type.Optional(
        StringEnum(upsertBy, {
          description:
            'Update the existing item holding the same key (200) instead of creating (201). `email`: the oldest live lead with that address (the duplicate rule). `externalId`: its holder; a holder in the trash answers 409. ' +
            'Items sharing a key apply in order, as if sent one by one: the first creates or updates, the later ones update that item (an `ifMatch` naming the version before an earlier item of the batch is 412).',
        }),
      ),
    },
    { additionalProperties: false, examples: [{ items: [example] }] },
  );
}

/** PATCH body: `{items: [{id, ifMatch?, …fields}]}`. */
export function BatchUpdateBody(updateBody: TSchema, example: unknown) {
  return Type.Object(
    {
      items: Type.Array(Type.Composite([Type.Object({ id: Id(), ifMatch: Type.Optional(IfMatch) }), updateBody], sameAdditional(updateBody)), {
        minItems: 1,
        maxItems: MAX_BATCH_ITEMS,
        description: `1 to ${MAX_BATCH_ITEMS} updates: the id and the fields to change (null clears).`,
      }),
    },
    { additionalProperties: false, examples: [{ items: [example] }] },
  );
}

/** What the route validates before the batch runs: the envelope only; every item is checked on its own. */
export function looseItems(body: TSchema): TSchema {
  const properties = (body as unknown as { properties: Record<string, TSchema> }).properties;
  const items = properties.items as unknown as { minItems: number; maxItems: number; description?: string };
  return Type.Object(
    { ...properties, items: Type.Array(Type.Unknown(), { minItems: items.minItems, maxItems: items.maxItems }) },
    { additionalProperties: false },
  );
}
