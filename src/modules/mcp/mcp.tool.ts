import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import type { Transaction } from 'kysely';
import type { AppContext } from '../../context.js';
import type { DB } from '../../db/schema.js';
import type { FieldError } from '../../errors.js';
import { API_PREFIX } from '../../http/openapi.js';
import { ok } from '../../http/schemas.js';
import { runIdempotent } from '../idempotency/idempotency.service.js';
import type { BuiltinResource } from '../fields/builtin-resources.js';
import { FieldFilterArgs } from '../objects/records.schemas.js';
import { customFieldCheck } from '../fields/custom-fields.service.js';
import type { Actor, Principal, Scope } from '../orgs/principal.js';

/** What a tool runs with: the same context and caller shape a REST handler passes to the services. */
export interface ToolRun {
  ctx: AppContext;
  principal: Principal;
  organizationId: string;
  /** The caller for writes: the key's actor with channel MCP, so events say the change came through MCP. */
  caller: { organizationId: string; actor: Actor };
  /** The call's `idempotencyKey` argument (create tools only; see defineCreateTool). */
  idempotencyKey: string | undefined;
}

/**
 * One MCP tool. Its input is a TypeBox schema — for writes the very body schema of the REST route — so
 * clients see the same JSON Schema and get the same validation messages as on the REST API.
 */
export interface McpTool<S extends TSchema = TSchema> {
  name: string;
  title: string;
  description: string;
  /** The caller needs ANY of these scopes, as with a REST route's `config.auth`. */
  scopes: Scope[];
  input: S;
  /** Reads only (hint for clients that ask before running a write). */
  readOnly: boolean;
  /** Removes data (MCP `destructiveHint`, so clients confirm with the user first). */
  destructive?: boolean;
  /** Creates something: takes the optional `idempotencyKey` argument (set by defineCreateTool, which honours it). */
  idempotent?: boolean;
  /**
   * Answers the item it creates, whole to any caller. Every other tool's answer shows an item to a key without
   * that kind's read scope in its minimal view only (shared/minimal-view.ts): `*:write` does not imply `*:read`.
   */
  creates?: boolean;
  run(run: ToolRun, input: Static<S>): Promise<Record<string, unknown>>;
  /**
   * Problems in the parts of the input its schema leaves open (custom field values of leads, accounts and
   * deals), checked on every call and reported with the schema's own in one VALIDATION_FAILED, as the REST
   * routes' preValidation does.
   */
  openFieldErrors?(run: ToolRun, input: Record<string, unknown>): Promise<FieldError[]>;
  /**
   * Where the organization's custom fields of a built-in resource go in this tool's published input schema
   * (tools/list, per session): beside the standard fields of a create body, in an update's `changes`, or as
   * the `filter[…]` arguments of a search.
   */
  customFields?: { resource: BuiltinResource; at: 'body' | 'changes' | 'filters' };
  /**
   * The argument holding the REST body the service checks (`changes` of an update, `values` of create_record):
   * the field errors the service finds are named under it, as the schema's and openFieldErrors' are.
   */
  bodyAt?: 'changes' | 'values';
  /**
   * The answer holds one item under this key (`lead`…): its `etag` goes beside it, the full item's tag as the
   * REST route's ETag header gives it, for a later call's `ifMatch`.
   */
  etag?: string;
}

/** openFieldErrors for a tool whose input is a built-in resource's create body. */
export const customFieldErrors = (resource: BuiltinResource) => async ({ ctx, organizationId }: ToolRun, input: Record<string, unknown>): Promise<FieldError[]> =>
  (await customFieldCheck(ctx, ctx.database.db, organizationId, resource))(input, 'create');

/** openFieldErrors for an update tool (UpdateInput): the custom values in `changes`, named under it as the schema's errors are. */
export const customChangeErrors = (resource: BuiltinResource) => async ({ ctx, organizationId }: ToolRun, input: Record<string, unknown>): Promise<FieldError[]> => {
  const changes = input.changes;
  if (changes === null || typeof changes !== 'object' || Array.isArray(changes)) return [];
  const errors = (await customFieldCheck(ctx, ctx.database.db, organizationId, resource))(changes as Record<string, unknown>, 'update');
  return errors.map((e) => ({ ...e, field: `changes.${e.field}` }));
};

/** Keeps each tool's `run` typed by its own input schema while the registry holds them as one list. */
export function defineTool<S extends TSchema>(tool: McpTool<S>): McpTool {
  return tool as unknown as McpTool;
}

/** The REST POST a create tool stands for: its path (under the API prefix) and body. */
export interface RestCreate {
  path: string;
  body: unknown;
}

/**
 * A tool that creates what a REST POST creates, with that route's Idempotency-Key semantics: the call's
 * `idempotencyKey` is the Idempotency-Key of `rest(input)` — the same key space (the organization's, shared with
 * REST), the same request hash (method, path, body), the same stored response — so a retried call, or its REST
 * twin, replays the first result instead of creating twice, and the same key with other arguments is refused with
 * REST's IDEMPOTENCY_KEY_REUSED. Without a key the creation runs in a transaction of its own, as any write.
 */
export function defineCreateTool<S extends TSchema>(
  tool: Omit<McpTool<S>, 'run' | 'readOnly' | 'idempotent' | 'creates'> & {
    rest(input: Static<S>): RestCreate;
    /** Creates in `trx` and answers what the REST route's `data` holds ({lead}, {record}…). */
    create(run: ToolRun, trx: Transaction<DB>, input: Static<S>): Promise<Record<string, unknown>>;
  },
): McpTool {
  const { rest, create, ...described } = tool;
  return defineTool<S>({
    ...described,
    readOnly: false,
    idempotent: true,
    creates: true,
    run: async (run, input) => {
      const { path, body } = rest(input);
      const request = { organizationId: run.organizationId, header: run.idempotencyKey, method: 'POST', path: `${API_PREFIX}${path}`, body };
      const created = await runIdempotent(run.ctx, request, async (trx) => ({ status: 201, body: ok(await create(run, trx, input)) }));
      return created.body.data;
    },
  });
}

/** The `idempotencyKey` argument of a create tool: an Idempotency-Key's characters, checked before the call runs. */
export const IdempotencyKeyArg = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: '^[\\x20-\\x7e]+$',
  description:
    'Makes a retry safe: send the same key with the same arguments and the first call\'s result comes back, nothing created twice (kept 24 h; the same key space as the REST API\'s Idempotency-Key). Use a new key for each thing to create; reusing one with other arguments is refused (IDEMPOTENCY_KEY_REUSED). 1-255 printable ASCII characters, e.g. a UUID.',
});

/** An id argument: any string, so an unknown or malformed id answers NOT_FOUND exactly as the REST path does. */
export const IdArg = (what: string) => Type.String({ minLength: 1, maxLength: 200, description: `${what} id.` });

export const GetInput = (what: string) => Type.Object({ id: IdArg(what) }, { additionalProperties: false });

/** The `ifMatch` argument of a write: the REST If-Match header (a batch item's `ifMatch`), compared by the service. */
export const IfMatchArg = (what: string) =>
  Type.String({
    minLength: 1,
    maxLength: 1024,
    description: `The \`etag\` a get or write tool answered with this ${what.toLowerCase()}: the call applies only if the ${what.toLowerCase()} still has it (\`*\` matches any version), else PRECONDITION_FAILED with the current one and its etag. Omit it to write whatever the current version.`,
  });

/** `{id, permanent?, ifMatch?}` of a delete tool. */
export const DeleteInput = (what: string) =>
  Type.Object(
    {
      id: IdArg(what),
      permanent: Type.Optional(Type.Boolean({ description: `true removes the ${what.toLowerCase()} for good at once, with no restore. Default: to the trash, restorable until purged.` })),
      ifMatch: Type.Optional(IfMatchArg(what)),
    },
    { additionalProperties: false },
  );

/** The description of a delete tool. */
export const deleteDescription = (what: string) =>
  `Delete a ${what}: it moves to the trash (gone from searches and reads; restorable with restore_${what}, in the console or with POST …/restore until it is purged after the retention period). \`permanent: true\` removes it for good at once. Ask the user before deleting.`;

/** `{id, ifMatch?}` of a restore tool. */
export const RestoreInput = (what: string) => Type.Object({ id: IdArg(what), ifMatch: Type.Optional(IfMatchArg(what)) }, { additionalProperties: false });

/** The description of a restore tool; `search` is the tool that lists the trash. */
export const restoreDescription = (what: string, search: string) =>
  `Bring a deleted ${what} back from the trash (records ${what}.restored). Find it with ${search} and \`deleted: true\`. NOT_FOUND for a ${what} that is not in the trash (live, unknown, deleted for good or purged after the retention period).`;

/** `{id, changes, ifMatch?}` where `changes` is the REST PATCH body of the resource. */
export const UpdateInput = <T extends TSchema>(what: string, changes: T) =>
  Type.Object({ id: IdArg(what), changes, ifMatch: Type.Optional(IfMatchArg(what)) }, { additionalProperties: false });

/**
 * A REST list query as a search tool's input: the same parameters, but a `filter[…]` value may be a JSON number
 * or boolean besides a string (`"filter[amount][gte]": 100`, `"filter[done]": true`), as an agent writes them;
 * the service reads it as the query string's text for a number or boolean field and refuses it for any other.
 */
export const withJsonFilters = <T extends TObject>(query: T) => Type.Object(query.properties as T['properties'], { additionalProperties: false, patternProperties: FieldFilterArgs });

/** How a list tool pages (cursor first, pages still work). */
export const PAGING_HELP = 'Paged with `limit` (max 100): pass `pagination.nextCursor` back as `after` for the next page (same `sort` and filters), or use `page`.';
