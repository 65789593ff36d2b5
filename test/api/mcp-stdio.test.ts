import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, type CallToolRequest } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import { revokeApiKey } from '../../src/modules/orgs/orgs.service.js';
import { buildTestApp, dialect, type TestApp } from '../helpers/test-app.js';
import { addKey, seedOrg, type Seeded } from '../helpers/seed.js';
import { callError, callOk, connect } from '../helpers/mcp.js';
import { call } from '../helpers/http.js';
import { runCli } from '../helpers/cli.js';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUILT_CLI } from '../helpers/build-global-setup.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = [BUILT_CLI, 'mcp'];

/** `crm mcp` as a desktop client runs it: a child process on the same database, the key in CRM_API_KEY. */
function crmMcpEnv(t: TestApp, key: string): Record<string, string> {
  return { PATH: process.env.PATH ?? '', DATABASE_URL: t.location, ENCRYPTION_KEY: t.config.encryptionKeys[0]!, CRM_API_KEY: key, LOG_LEVEL: 'silent' };
}

function stdioTransport(t: TestApp, key: string): StdioClientTransport {
  return new StdioClientTransport({ command: process.execPath, args: CLI, cwd: ROOT, env: crmMcpEnv(t, key), stderr: 'pipe' });
}

// The child opens the test's SQLite file directly; a PostgreSQL test schema is not reachable by DATABASE_URL alone.
describe.runIf(dialect === 'sqlite')('crm mcp over stdio', () => {
  let t: TestApp;
  let s: Seeded;
  let reader: Awaited<ReturnType<typeof addKey>>;
  let client: Client;
  let readerClient: Client;
  let badKeyRun: Promise<{ code: number | null; stdout: string; stderr: string }>;

  beforeAll(async () => {
    t = await buildTestApp();
    s = await seedOrg(t.ctx);
    reader = await addKey(t.ctx, s.orgId, ['leads:read'], { rateLimitPerMinute: 3 });
    // Each child takes a second or more to start on a busy machine: start them all at once.
    badKeyRun = runCrmMcp(crmMcpEnv(t, 'crm_live_nottherightkeynottherightkey'));
    [client, readerClient] = await Promise.all([connect(stdioTransport(t, s.key)), connect(stdioTransport(t, reader.key))]);
  }, 120_000);
  afterAll(async () => {
    await client?.close();
    await readerClient?.close();
    await badKeyRun;
    await t?.close();
  });

  it('lists the same tools as the HTTP endpoint', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['search_leads', 'get_lead', 'create_lead', 'update_lead']));
  });

  it('creates a lead that the REST API then finds, with events carrying channel MCP', async () => {
    const { lead } = await callOk(client, 'create_lead', { name: 'Ada Lovelace', email: 'ada@engine.example' });
    const found = await callOk(client, 'search_leads', { q: 'ada@engine.example' });
    expect(found.leads.map((l: { id: string }) => l.id)).toEqual([lead.id]);
    const rest = await call(t.app, 'GET', `/leads/${lead.id}`, { auth: s.auth });
    expect(rest.body.data.lead).toEqual(lead);
    await callOk(client, 'update_lead', { id: lead.id, changes: { status: 'CONTACTED' } });
    const events = await listEvents(t.ctx.database.db, s.orgId, { objectId: lead.id });
    expect(events.map((e) => [e.type, e.data.actor])).toEqual([
      ['lead.created', { type: 'API_KEY', id: s.keyId, channel: 'MCP' }],
      ['lead.updated', { type: 'API_KEY', id: s.keyId, channel: 'MCP' }],
    ]);
  });

  it('answers malformed tool arguments and an unknown tool with -32602 Invalid params, prefixed once by the SDK client', async () => {
    const request = { method: 'tools/call', params: { name: 'create_lead', arguments: 'name=x' } } as unknown as CallToolRequest;
    await expect(client.request(request, CallToolResultSchema)).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/^MCP error -32602: Invalid tools\/call request: (?!MCP error)/) });
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/^MCP error -32602: Unknown tool no_such_tool$/);
  });

  it('refuses a tool outside the key scopes, spending a unit as every call does, then applies the limit, then a revocation', async () => {
    const { text } = await callError(readerClient, 'create_lead', { name: 'Nope' }, 'INSUFFICIENT_SCOPE');
    expect(text).toContain('leads:write');
    for (let i = 0; i < 2; i += 1) await callOk(readerClient, 'search_leads', {});
    await callError(readerClient, 'create_lead', { name: 'Nope' }, 'RATE_LIMITED');
    const limited = await callError(readerClient, 'search_leads', {}, 'RATE_LIMITED');
    expect(limited.text).toMatch(/Retry after \d+ s\./);
    await revokeApiKey(t.ctx, reader.keyId);
    await callError(readerClient, 'search_leads', {}, 'UNAUTHORIZED');
  });

  it('exits with a message, before serving, when CRM_API_KEY is not a valid key', async () => {
    const { code, stdout, stderr } = await badKeyRun;
    expect(code).toBe(1);
    expect(stderr).toContain('CRM_API_KEY is not a valid API key');
    expect(stdout).toBe('');
  });
});

// Without DATABASE_URL the CLI opens data/crm.db of its working directory: run from the wrong one, it used to
// create and migrate an empty database (and an encryption key beside it), then call the key invalid.
describe.runIf(dialect === 'sqlite')('CLI commands on a SQLite database that does not exist', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'crm-missing-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('crm mcp, crm worker and crm key list refuse to run, create nothing, and say where they looked; crm org create may create it', async () => {
    const missing = join(dir, 'data', 'crm.db');
    const created = join(dir, 'fresh', 'crm.db');
    const env = { DATABASE_URL: missing, LOG_LEVEL: 'silent' };
    const [mcp, keys, worker, org] = await Promise.all([
      runCrmMcp({ PATH: process.env.PATH ?? '', ...env, CRM_API_KEY: 'crm_live_whateverwhateverwhateverwhat' }),
      runCli(['key', 'list', '--org', '0123456789abcdef01234567'], env),
      runCli(['worker'], env),
      runCli(['--json', 'org', 'create', '--name', 'First'], { ...env, DATABASE_URL: created }),
    ]);
    for (const refused of [mcp, keys, worker]) {
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`No database at ${missing}`);
      expect(refused.stdout).toBe('');
    }
    expect(existsSync(join(dir, 'data'))).toBe(false);
    expect(org.code, org.stderr).toBe(0);
    expect(existsSync(created)).toBe(true);
  }, 120_000);
});

function runCrmMcp(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, CLI, { cwd: ROOT, env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  child.stdin.end();
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}
