import { ListUsersQuery } from '../../orgs/users.schemas.js';
import { listApiUsers } from '../../orgs/users.service.js';
import { defineTool, PAGING_HELP } from '../mcp.tool.js';

export const userTools = [
  defineTool({
    name: 'list_users',
    title: 'List the users',
    description:
      `The people of the organization, newest first: each user's \`id\` (what \`ownerId\` takes), \`name\`, work \`email\`, \`role\` (admin or member) and \`active\`. Use it to pick an owner or to show who owns a lead or deal. Filters \`role\`, \`active\`; \`sort\`: name, -name, -createdAt, createdAt, -updatedAt, updatedAt. ${PAGING_HELP}`,
    scopes: ['users:read'],
    readOnly: true,
    input: ListUsersQuery,
    run: ({ ctx, organizationId }, input) => listApiUsers(ctx, organizationId, input),
  }),
];
