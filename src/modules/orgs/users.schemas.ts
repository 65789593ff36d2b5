import { Type, type Static } from '@sinclair/typebox';
import { Envelope, Id, Timestamp } from '../../http/schemas.js';
import { Pagination } from '../../lib/pagination.js';
import { ListParams, NAMED_SORTS, SortQuery } from '../../lib/list-request.js';

export const USER_ROLES = ['admin', 'member'] as const;

/**
 * A colleague as integrators see them (contract §9): enough to choose and show an `ownerId`. The e-mail is
 * the user's work address (stored encrypted, like every contact detail) and is never logged.
 */
export const User = Type.Object(
  {
    id: Id(),
    name: Type.String(),
    email: Type.String({ format: 'email', description: 'Work e-mail address (the console sign-in).' }),
    role: Type.Unsafe<(typeof USER_ROLES)[number]>({ type: 'string', enum: [...USER_ROLES], description: '`admin` manages the organization in the console; `member` works in it.' }),
    active: Type.Boolean({ description: 'False once an administrator deactivated the user: they can\'t sign in, their API keys stop working, and they can\'t be made an owner or assignee (existing assignments stay).' }),
    createdAt: Timestamp('When the user was added.'),
  },
  { $id: 'User', additionalProperties: false },
);
export type User = Static<typeof User>;

export const UserEnvelope = Envelope(Type.Object({ user: Type.Ref(User) }));
export const UserListEnvelope = Envelope(Type.Object({ users: Type.Array(Type.Ref(User)), pagination: Type.Ref(Pagination) }));

export const ListUsersQuery = Type.Object(
  {
    role: Type.Optional(Type.Unsafe<(typeof USER_ROLES)[number]>({ type: 'string', enum: [...USER_ROLES], description: 'Only the users with this role.' })),
    active: Type.Optional(Type.Boolean({ description: 'Only active (true) or deactivated (false) users.' })),
    ...ListParams,
    ...SortQuery(NAMED_SORTS),
  },
  { additionalProperties: false },
);
export type ListUsersQuery = Static<typeof ListUsersQuery>;
