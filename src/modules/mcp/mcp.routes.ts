import type { FastifyInstance } from 'fastify';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AppContext } from '../../context.js';
import { AppError } from '../../errors.js';
import { requirePrincipal } from '../../http/auth.js';
import { createMcpServer, requireScopes } from './mcp.server.js';

export const MCP_PATH = '/mcp';

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
    const server = createMcpServer(ctx, { authorize: async (scopes) => requireScopes(principal, scopes), logError: (err, tool) => request.log.error({ err, tool }, 'MCP tool failed') }, version);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.raw.once('close', () => {
      void server.close();
    });
    await server.connect(transport);
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
