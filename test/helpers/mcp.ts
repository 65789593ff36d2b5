import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { afterAll, beforeAll, expect } from 'vitest';
import { buildTestApp, type TestApp } from './test-app.js';
import { seedOrg, type Seeded } from './seed.js';

/** The app listening on a free local port (MCP clients speak real HTTP, not inject); returns its origin. */
export async function listen(t: TestApp): Promise<string> {
  const address = t.app.server.address();
  if (address && typeof address === 'object') return `http://127.0.0.1:${address.port}`;
  return t.app.listen({ port: 0, host: '127.0.0.1' });
}

export async function connect(transport: Transport): Promise<Client> {
  const client = new Client({ name: 'crm-tests', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

export interface McpSetup {
  t: TestApp;
  origin: string;
  s: Seeded;
  client: Client;
  /** Closes the client and the app; safe to call on a set-up that never finished. */
  close(): Promise<void>;
}

/** The set-up of an MCP test file: the app listening on a free port, an organization, and the SDK client with its key. */
export async function openMcp(): Promise<McpSetup> {
  const t = await buildTestApp();
  let client: Client | undefined;
  const close = async () => {
    await client?.close();
    await t.close();
  };
  try {
    const origin = await listen(t);
    const s = await seedOrg(t.ctx);
    client = await connect(httpTransport(origin, s.key));
    return { t, origin, s, client, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * The MCP set-up of a test file (openMcp), opened before its tests and closed after them: its fields are there
 * once the tests run.
 */
export function useMcp(): Omit<McpSetup, 'close'> {
  const setup = {} as McpSetup;
  beforeAll(async () => {
    Object.assign(setup, await openMcp());
  });
  afterAll(() => setup.close?.());
  return setup;
}

/** The SDK's own client over Streamable HTTP with an API key as Bearer token. */
export function httpTransport(origin: string, key: string): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(new URL('/mcp', origin), { requestInit: { headers: { authorization: `Bearer ${key}` } } });
}

/** One raw POST /mcp (a message or a batch), for what the SDK client cannot send. */
export function rpc(origin: string, key: string, body: unknown): Promise<Response> {
  return fetch(`${origin}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify(body),
  });
}

type ToolResult = Awaited<ReturnType<Client['callTool']>>;

/** A successful call's structured result. */
export async function callOk(client: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const res: ToolResult = await client.callTool({ name, arguments: args });
  expect(res.isError, JSON.stringify(res.content)).toBeFalsy();
  const text = (res.content as { type: string; text: string }[])[0]!.text;
  expect(JSON.parse(text)).toEqual(res.structuredContent);
  return res.structuredContent;
}

/** A refused call: asserts it is a tool error with this code; returns its text and field errors. */
export async function callError(client: Client, name: string, args: Record<string, unknown>, code: string) {
  const res: ToolResult = await client.callTool({ name, arguments: args });
  expect(res.isError, JSON.stringify(res.content)).toBe(true);
  const text = (res.content as { type: string; text: string }[])[0]!.text;
  expect(text.startsWith(`${code}: `), text).toBe(true);
  const structured = res.structuredContent as { code: string; errors?: { field: string; code: string; message: string }[] };
  expect(structured.code).toBe(code);
  return { text, errors: structured.errors ?? [] };
}
