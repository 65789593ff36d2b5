import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import { requirePrincipal } from '../../http/auth.js';
import { Envelope, Nullable, ok } from '../../http/schemas.js';

const Me = Type.Object({
  organization: Type.Object({ id: Type.String(), name: Type.String(), timezone: Type.String() }),
  key: Type.Object({
    id: Type.String(),
    name: Type.String(),
    prefix: Type.String(),
    scopes: Type.Array(Type.String()),
    expiresAt: Nullable(Type.String({ format: 'date-time' })),
  }),
  user: Nullable(Type.Object({ id: Type.String(), name: Type.String() })),
  rateLimit: Type.Object({ limit: Type.Integer(), windowSeconds: Type.Integer() }),
});

export function registerMeRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get('/me', {
    config: { auth: { anyOf: [] } },
    schema: { tags: ['Identity'], summary: 'Identity of the calling key', response: { 200: { ...Envelope(Type.Object({ me: Me })), description: 'The calling key with its scopes, its organization, its user and its rate limit.' } } },
    handler: async (request) => {
      const p = requirePrincipal(request);
      return ok({
        me: {
          organization: p.organization,
          key: { id: p.key.id, name: p.key.name, prefix: p.key.prefix, scopes: p.key.scopes, expiresAt: p.key.expiresAt },
          user: p.user,
          rateLimit: { limit: p.key.rateLimitPerMinute ?? ctx.config.rateLimitPerMinute, windowSeconds: 60 },
        },
      });
    },
  });
}
