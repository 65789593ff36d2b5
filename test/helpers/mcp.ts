import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { expect } from 'vitest';
import type { TestApp } from './test-app.js';

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
