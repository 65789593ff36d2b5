import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { requirePrincipal } from '../../http/auth.js';
import { IdParams, ok } from '../../http/schemas.js';
import { ListUsersQuery, UserEnvelope, UserListEnvelope } from './users.schemas.js';
import { getApiUser, listApiUsers } from './users.service.js';

const tags = ['Users'];
const config = { auth: { anyOf: ['users:read' as const] } };

/** The organization's users (contract §9), read-only: they are managed in the console and by `crm user`. */
export function registerUserRoutes(parent: FastifyInstance, ctx: AppContext): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const orgOf = (request: Parameters<typeof requirePrincipal>[0]) => requirePrincipal(request).organization.id;

  app.get('/users', {
    config,
    schema: {
      tags,
      summary: 'List users',
      description: 'The people of your organization, newest first or in `sort`: the ids `ownerId` and `assigneeId` take, with names to show. Filters `role` and `active`; `after` walks with cursors.',
      querystring: ListUsersQuery,
      response: { 200: UserListEnvelope },
    },
    handler: async (request) => ok(await listApiUsers(ctx, orgOf(request), request.query)),
  });

  app.get('/users/:id', {
    config: { ...config, etag: 'user' },
    schema: { tags, summary: 'Get a user', params: IdParams, response: { 200: UserEnvelope } },
    handler: async (request) => ok({ user: await getApiUser(ctx, orgOf(request), request.params.id) }),
  });
}
