import type { FastifyInstance, FastifyReply } from 'fastify';
import { MAX_BATCH_SIZE } from '@modelcontextprotocol/sdk/server/requestBody.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AppContext } from '../../context.js';
import { AppError, validationFailed } from '../../errors.js';
import { rateLimitExceeded, requirePrincipal, setRateLimitHeaders, spendRateLimit } from '../../http/auth.js';
import type { Principal } from '../orgs/principal.js';
import { connectMcpServer, createMcpServer, requireScopes } from './mcp.server.js';

export const MCP_PATH = '/mcp';

/**
 * A JSON-RPC batch spends one unit per message, as stdio spends one per tool call: the POST paid for one in
 * the auth hook, the rest are taken here, all or none, before any message runs. A batch that does not fit
 * is refused whole (429, nothing run, nothing more spent); one larger than the key's whole limit never
 * could fit, so it is refused as invalid instead of being told to retry. The transport itself refuses a
 * batch over MAX_BATCH_SIZE without running any of it, so that one costs only its POST.
 */
async function chargeBatch(ctx: AppContext, principal: Principal, reply: FastifyReply, body: unknown): Promise<void> {
  const messages = Array.isArray(body) ? body.length : 1;
  if (messages <= 1 || messages > MAX_BATCH_SIZE) return;
  const budget = await spendRateLimit(ctx.rateLimiter, principal, ctx.config.rateLimitPerMinute, messages - 1);
  setRateLimitHeaders(reply, budget);
  if (budget.allowed) return;
  if (messages > budget.limit) {
    throw validationFailed([{ field: 'body', code: 'too_long', message: `a batch spends one request per message: send at most ${budget.limit} messages (this key's limit per minute)` }]);
  }
  throw rateLimitExceeded(budget);
}

/**
 * MCP over Streamable HTTP, stateless: every POST builds a server for the key that authenticated it (the
 * same Bearer keys, scopes and rate limit as REST, via `config.auth`) and answers with plain JSON. No
 * session lives in memory, so any instance behind a load balancer can answer any request; the optional
 * GET stream (server-initiated messages) and DELETE (ending a session) therefore answer 405, as the
 * transport specification allows.
 */
export function registerMcpRoutes(app: FastifyInstance, ctx: AppContext, version: string): void {
  const config = { auth: { anyOf: [] } };
  app.post(MCP_PATH, { config, schema: { hide: true } }, async (request, reply) => {
    const principal = requirePrincipal(request);
    // JSON-RPC 2.0: an empty batch is one Invalid Request answer, not silence (the transport would answer 202).
    if (Array.isArray(request.body) && request.body.length === 0) {
      return reply.code(400).send({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: an empty batch' } });
    }
    await chargeBatch(ctx, principal, reply, request.body);
    const server = createMcpServer(ctx, { authorize: async (scopes) => requireScopes(principal, scopes), logError: (err, tool) => request.log.error({ err, tool }, 'MCP tool failed') }, version);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.raw.once('close', () => {
      void server.close();
    });
    await connectMcpServer(server, transport);
    // The transport writes the raw response: carry over what the pipeline already set (request id, rate limit).
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if (value !== undefined) reply.raw.setHeader(name, value);
    }
    reply.hijack();
    try {
      await transport.handleRequest(request.raw, reply.raw, request.body);
    } catch (err) {
      // Hijacked: the error handler can no longer answer, so answer as JSON-RPC does.
      request.log.error({ err }, 'MCP request failed');
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json' });
        reply.raw.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error' } }));
      }
    }
  });

  const noSessions = async () => {
    throw new AppError('METHOD_NOT_ALLOWED', 'This MCP endpoint is stateless: send every JSON-RPC message with POST', { headers: { allow: 'POST' } });
  };
  app.get(MCP_PATH, { config, schema: { hide: true } }, noSessions);
  app.delete(MCP_PATH, { config, schema: { hide: true } }, noSessions);
}
