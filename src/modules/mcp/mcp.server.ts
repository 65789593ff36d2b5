// The MCP server: tools/list and tools/call over whichever transport connects it (Streamable HTTP or
// stdio). It uses the SDK's low-level `Server` rather than `McpServer`, because McpServer only takes zod
// schemas: our tools reuse the REST routes' TypeBox (JSON Schema) bodies and validate them with the same
// ajv setup, so an agent gets the same fields, rules and error messages as a REST client.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, isJSONRPCErrorResponse, ListToolsRequestSchema, McpError, RequestSchema, type CallToolRequest, type CallToolResult, type JSONRPCMessage, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { Type } from '@sinclair/typebox';
import { z } from 'zod';
import type { AppContext } from '../../context.js';
import { AppError, validationFailed } from '../../errors.js';
import { validateValue } from '../../http/validation.js';
import type { Principal, Scope } from '../orgs/principal.js';
import { seenAfterWrite } from '../shared/minimal-view.js';
import { BUILTIN_RESOURCES, type BuiltinResource } from '../fields/builtin-resources.js';
import { documentedBuiltins } from '../fields/custom-fields.openapi.js';
import { customFieldsOf } from '../fields/custom-fields.service.js';
import type { Definition, Field } from '../objects/definition.js';
import { filterParameters, nullable, valueSchema } from '../objects/field-schemas.openapi.js';
import { explainQueryArguments, queryArguments } from './mcp.arguments.js';
import { MAX_RESULT_CHARS, readWithinSize } from './mcp.result-size.js';
import { IdempotencyKeyArg, type McpTool } from './mcp.tool.js';
import { MCP_TOOLS } from './tools/index.js';

export const MCP_SERVER_NAME = 'crm';

export interface McpSession {
  /**
   * Admits one tool call needing any of `scopes` and returns the caller, or throws an AppError
   * (UNAUTHORIZED, RATE_LIMITED, INSUFFICIENT_SCOPE) as the REST pipeline would. Over HTTP the request was
   * authenticated and charged by the auth hook (a batch one unit per message), so only the tool's scope is
   * left to check; over stdio the key is re-authenticated, charged and scope-checked on every call.
   */
  authorize(scopes: readonly Scope[]): Promise<Principal>;
  logError(err: unknown, toolName: string): void;
}

/** The scope check of a REST route's `config.auth`, for one tool. */
export function requireScopes(principal: Principal, scopes: readonly Scope[]): Principal {
  if (scopes.length > 0 && !scopes.some((s) => principal.key.scopes.includes(s))) {
    throw new AppError('INSUFFICIENT_SCOPE', `This tool needs the scope ${scopes.join(' or ')}`);
  }
  return principal;
}

/**
 * The schema tools/call is registered with: the method only. The protocol layer parses every request with
 * its handler's schema first and answers a failure with -32603 (Internal error); the Server then checks
 * tools/call's params itself and answers a bad `name` or `arguments` with -32602 (Invalid params), as the
 * specification asks — so the params are left to that check.
 */
const ToolsCallRequest = RequestSchema.extend({ method: z.literal('tools/call') });

const INSTRUCTIONS = [
  'Tools of a CRM: search, read, create and update leads, accounts, deals and records of custom objects (use describe_object for their fields).',
  'Search before creating, to avoid duplicates. To change an item only if nobody changed it since you read it, pass the `etag` a get tool answered as `ifMatch` (PRECONDITION_FAILED then returns the current item and its etag).',
  'Errors come back as tool errors whose text starts with a stable code (VALIDATION_FAILED, NOT_FOUND, INSUFFICIENT_SCOPE, RATE_LIMITED…) followed by one line per invalid field.',
].join(' ');

export function createMcpServer(ctx: AppContext, session: McpSession, version: string, tools: readonly McpTool[] = MCP_TOOLS): Server {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const server = new Server({ name: MCP_SERVER_NAME, version }, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const fields = await customFieldsFor(ctx, session, tools);
    return { tools: tools.map((tool) => withCustomFields(describeTool(tool), tool, fields)) };
  });
  server.setRequestHandler(ToolsCallRequest, async (loose) => {
    const { params } = loose as CallToolRequest;
    const tool = byName.get(params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${params.name}`);
    return callTool(ctx, session, tool, params.arguments ?? {});
  });
  return server;
}

/**
 * Connects a server to its transport (HTTP or stdio) so that protocol errors leave prefixed by no one. The SDK's
 * McpError writes "MCP error <code>: " into its message, the server sends that message as the JSON-RPC error's,
 * and the SDK's client prefixes what it receives again ("MCP error -32602: MCP error -32602: Unknown tool x").
 * Every error answer — ours and the SDK's own, such as an invalid tools/call — leaves through `send`, so the
 * prefix comes off there, once; the number stays in the error's `code`.
 */
export function connectMcpServer(server: Server, transport: Transport): Promise<void> {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => send(withoutErrorPrefix(message), options);
  return server.connect(transport);
}

function withoutErrorPrefix(message: JSONRPCMessage): JSONRPCMessage {
  if (!isJSONRPCErrorResponse(message)) return message;
  const prefix = `MCP error ${message.error.code}: `;
  return message.error.message.startsWith(prefix) ? { ...message, error: { ...message.error, message: message.error.message.slice(prefix.length) } } : message;
}

/**
 * The organization's custom fields of each built-in resource the session's key may use (as its OpenAPI
 * document types them), for the tools that take them; none when the key can't be read (its calls fail anyway).
 */
async function customFieldsFor(ctx: AppContext, session: McpSession, tools: readonly McpTool[]): Promise<Partial<Record<BuiltinResource, readonly Field[]>>> {
  const resources = [...new Set(tools.flatMap((t) => (t.customFields ? [t.customFields.resource] : [])))];
  if (resources.length === 0) return {};
  const principal = await session.authorize([]).catch(() => undefined);
  if (!principal) return {};
  const definitions = Object.fromEntries(
    await Promise.all(BUILTIN_RESOURCES.map(async (r) => [r, resources.includes(r) ? (await customFieldsOf(ctx, ctx.database.db, principal.organization.id, r)).definition : { fields: [], stages: [] }] as const)),
  ) as Record<BuiltinResource, Definition>;
  const usable = documentedBuiltins(principal.key.scopes, definitions);
  return Object.fromEntries(Object.entries(usable).map(([r, d]) => [r, d.fields]));
}

/** A tool's published input with the custom fields where `tool.customFields` says (the REST document's schemas for them). */
function withCustomFields(described: Tool, tool: McpTool, fields: Partial<Record<BuiltinResource, readonly Field[]>>): Tool {
  const place = tool.customFields;
  const custom = place ? fields[place.resource] : undefined;
  if (!place || !custom?.length) return described;
  const input = described.inputSchema as { properties: Record<string, any>; required?: string[] };
  if (place.at === 'filters') {
    for (const p of filterParameters(custom, place.resource) as { name: string; schema: object; description: string }[]) {
      input.properties[p.name] = { ...p.schema, description: p.description };
    }
  } else {
    const target = place.at === 'body' ? input : (input.properties.changes as { properties: Record<string, any>; required?: string[] });
    for (const f of custom) target.properties[f.key] = f.required && place.at === 'body' ? valueSchema(f, 'write') : nullable(valueSchema(f, 'write'));
    const required = place.at === 'body' ? custom.filter((f) => f.required).map((f) => f.key) : [];
    if (required.length) target.required = [...(target.required ?? []), ...required];
  }
  return described;
}

const SIZE_HELP = `A page whose JSON would pass ${MAX_RESULT_CHARS} characters comes back with fewer items and \`truncated\` saying so: continue with \`after\` = pagination.nextCursor.`;

const IDEMPOTENCY_HELP =
  'Pass `idempotencyKey` (e.g. a new UUID for each thing to create) and retry a call that timed out or failed with the same key and arguments: the first result comes back and nothing is created twice.';

function describeTool(tool: McpTool): Tool {
  const scopes = tool.scopes.join(' or ');
  // TypeBox keeps its metadata under symbols; a JSON round trip leaves the plain JSON Schema.
  const inputSchema = JSON.parse(JSON.stringify(tool.input)) as Tool['inputSchema'] & { properties: Record<string, object> };
  if (tool.idempotent) inputSchema.properties = { ...inputSchema.properties, idempotencyKey: JSON.parse(JSON.stringify(IdempotencyKeyArg)) as object };
  const lists = tool.readOnly && 'limit' in inputSchema.properties;
  const help = [tool.description, ...(lists ? [SIZE_HELP] : []), ...(tool.idempotent ? [IDEMPOTENCY_HELP] : [])].join(' ');
  return {
    name: tool.name,
    title: tool.title,
    description: `${help}\n\nNeeds the API key scope ${scopes}.`,
    inputSchema,
    annotations: { title: tool.title, readOnlyHint: tool.readOnly, destructiveHint: tool.destructive === true, openWorldHint: false },
  };
}

/** Key, rate limit and scope first, then input validation, then the service — the order of the REST pipeline. */
async function callTool(ctx: AppContext, session: McpSession, tool: McpTool, args: Record<string, unknown>): Promise<CallToolResult> {
  let scopes: readonly Scope[] = [];
  try {
    const principal = await session.authorize(tool.scopes);
    scopes = principal.key.scopes;
    const { idempotencyKey, input } = tool.idempotent ? withoutKey(structuredClone(args)) : { idempotencyKey: undefined, input: tool.readOnly ? queryArguments(tool.input, structuredClone(args)) : structuredClone(args) };
    const organizationId = principal.organization.id;
    const run = { ctx, principal, organizationId, caller: { organizationId, actor: { ...principal.actor, channel: 'MCP' as const } }, idempotencyKey };
    const inputErrors = validateValue(tool.input, input, 'arguments');
    const errors = [...validateValue(IdempotencyKeyArgument, { idempotencyKey }, 'arguments'), ...(tool.readOnly ? explainQueryArguments(tool.input, inputErrors) : inputErrors)];
    const open = tool.openFieldErrors && input !== null && typeof input === 'object' ? await tool.openFieldErrors(run, input) : [];
    if (errors.length + open.length > 0) throw validationFailed([...errors, ...open]);
    // A read may be run again, shorter, to fit the bound; a write runs once.
    const answer = tool.readOnly ? await readWithinSize((asked) => tool.run(run, asked), input) : await tool.run(run, input).catch(namedUnder(tool.bodyAt));
    const tagged = withEtag(ctx, answer, tool.etag);
    const result = tool.creates ? tagged : seenAfterWrite(scopes, tagged);
    return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
  } catch (err) {
    if (!(err instanceof AppError)) session.logError(err, tool.name);
    if (err instanceof AppError && err.code === 'PRECONDITION_FAILED' && err.data) return versionChanged(ctx, err.data, scopes);
    return toolError(err instanceof AppError ? err : new AppError('INTERNAL_ERROR', 'An unexpected error occurred'));
  }
}

/** The answer with the tag of its item beside it (`etag`), computed on the whole item as the REST ETag is. */
function withEtag(ctx: Pick<AppContext, 'entityTagger'>, answer: Record<string, unknown>, key: string | undefined): Record<string, unknown> {
  return key !== undefined && answer[key] !== undefined ? { ...answer, etag: ctx.entityTagger.tagOf(answer[key]) } : answer;
}

/**
 * A write whose `ifMatch` is not the item's current tag: the current item (its minimal view for a key that may
 * not read it, as a REST 412's `data`) and its etag, so the agent can merge and call again with that etag.
 */
function versionChanged(ctx: Pick<AppContext, 'entityTagger'>, data: Record<string, unknown>, scopes: readonly Scope[]): CallToolResult {
  const [key] = Object.keys(data);
  const current = seenAfterWrite(scopes, withEtag(ctx, data, key));
  const message = `The ${key} has changed since the version named by ifMatch: the current ${key} and its etag follow; merge your changes into it and call again with ifMatch set to that etag`;
  return {
    isError: true,
    content: [{ type: 'text', text: `PRECONDITION_FAILED: ${message}\n${JSON.stringify(current)}` }],
    structuredContent: { status: false, code: 'PRECONDITION_FAILED', message, ...current },
  };
}

/** Rethrows a service's VALIDATION_FAILED with its fields named under the argument that holds the body they are in. */
function namedUnder(bodyAt: string | undefined) {
  return (err: unknown): never => {
    if (bodyAt === undefined || !(err instanceof AppError) || err.code !== 'VALIDATION_FAILED' || !err.errors) throw err;
    throw validationFailed(err.errors.map((e) => ({ ...e, field: `${bodyAt}.${e.field}` })));
  };
}

const IdempotencyKeyArgument = Type.Object({ idempotencyKey: Type.Optional(IdempotencyKeyArg) });

/** A create tool's arguments: the `idempotencyKey` apart, the rest being the REST body it stands for. */
function withoutKey(args: Record<string, unknown>): { idempotencyKey: string | undefined; input: Record<string, unknown> } {
  const { idempotencyKey, ...input } = args;
  return { idempotencyKey: idempotencyKey as string | undefined, input };
}

/** A refused call as an MCP tool error: the code and every field message, readable by a model and a program. */
export function toolError(err: AppError): CallToolResult {
  const lines = [`${err.code}: ${err.message}`, ...(err.errors ?? []).map((e) => `- ${e.field} (${e.code}): ${e.message}`)];
  const retryAfter = err.headers?.['retry-after'];
  if (retryAfter) lines.push(`Retry after ${retryAfter} s.`);
  return {
    isError: true,
    content: [{ type: 'text', text: lines.join('\n') }],
    structuredContent: { status: false, code: err.code, message: err.message, ...(err.errors ? { errors: err.errors } : {}) },
  };
}
