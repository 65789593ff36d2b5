import type { Core } from '../core.js';
import type { CallOptions, Query, ResponseData, Schema } from '../types.js';
import { listing } from './listing.js';

const USERS = '/api/public/v1/users';
const USER = '/api/public/v1/users/{id}';

/** A colleague: the ids `ownerId` takes, with name, work e-mail, role and whether they can be given work. */
export type User = Schema<'User'>;
export type UserQuery = Query<typeof USERS, 'get'>;
export type UserPage = ResponseData<typeof USERS, 'get'>;

/** The organization's users (scope users:read), read-only. */
export function usersResource(core: Core) {
  return {
    get: async (id: string, opts?: CallOptions): Promise<User> => (await core.call(USER, 'get', { params: { id } }, opts)).user,
    ...listing((query: UserQuery, opts?: CallOptions) => core.call(USERS, 'get', { query }, opts), (page) => page.users),
  };
}
