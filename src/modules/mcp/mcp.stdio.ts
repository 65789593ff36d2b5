import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { AppContext } from '../../context.js';
import { AppError } from '../../errors.js';
import { rateLimitExceeded, spendRateLimit } from '../../http/auth.js';
import { createAuthenticator } from '../orgs/orgs.service.js';
import type { Scope } from '../orgs/principal.js';
import { connectMcpServer, createMcpServer, requireScopes } from './mcp.server.js';

export interface StdioOptions {
  apiKey: string;
  version: string;
  stdin?: Readable;
  stdout?: Writable;
  /** Where tool failures are logged: never stdout, which carries the protocol. */
  logError?: (message: string) => void;
}

/**
 * `crm mcp`: MCP over stdin/stdout for a desktop client, acting as one API key. The key is checked before
 * serving (a bad key fails at once, with a message) and again on every tool call — authentication, the
 * rate limit, then the scope, as the REST pipeline does — so a revoked key stops working and limits apply alike.
 * Resolves when the client closes stdin.
 */
export async function serveMcpOverStdio(ctx: AppContext, opts: StdioOptions): Promise<void> {
  const authenticate = createAuthenticator(ctx);
  const authorize = async (scopes: readonly Scope[]) => {
    const found = await authenticate(opts.apiKey);
    if (!found) throw new AppError('UNAUTHORIZED', 'The API key is invalid, revoked or expired');
    const budget = await spendRateLimit(ctx.rateLimiter, found, ctx.config.rateLimitPerMinute);
    if (!budget.allowed) throw rateLimitExceeded(budget);
    return requireScopes(found, scopes);
  };
  if (!(await authenticate(opts.apiKey))) throw new AppError('UNAUTHORIZED', 'CRM_API_KEY is not a valid API key (unknown, revoked or expired)');

  const log = opts.logError ?? ((message: string) => process.stderr.write(`${message}\n`));
  const server = createMcpServer(ctx, { authorize, logError: (err, tool) => log(`MCP tool ${tool} failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`) }, opts.version);
  const stdin = opts.stdin ?? process.stdin;
  const closed = new Promise<void>((resolve) => {
    server.onclose = resolve;
  });
  stdin.once('end', () => void server.close());
  await connectMcpServer(server, new StdioServerTransport(stdin, opts.stdout ?? process.stdout));
  await closed;
}
