import { inTransaction } from '../../../db/transaction.js';
import { CreateLeadBody, ListLeadsQuery, UpdateLeadBody } from '../../leads/leads.schemas.js';
import { createLead, deleteLead, getLead, listLeads, restoreLead, updateLead } from '../../leads/leads.service.js';
import { defineCreateTool, defineTool, deleteDescription, DeleteInput, GetInput, UpdateInput, customFieldErrors, customChangeErrors, withJsonFilters , RestoreInput, restoreDescription } from '../mcp.tool.js';

export const leadTools = [
  defineTool({
    name: 'search_leads',
    title: 'Search leads',
    description:
      'Find leads, newest first. `q` is matched exactly when it is an e-mail address or a phone number with its country code (+14155550100), otherwise as a case-insensitive substring of the name; omit it to list all. Filters: `status`, `source`, `sourceCampaign`, `ownerId`, `accountId`. `sort` orders the list (default `-createdAt`, newest first; also createdAt, updatedAt, -updatedAt, name, -name); `createdAfter`/`createdBefore`/`updatedAfter`/`updatedBefore` take ISO instants. Paged with `limit` (max 100): pass `pagination.nextCursor` back as `after` for the next page (null on the last). Custom fields filter with `filter[<key>]` (equality) and `filter[<key>][gte|lte|gt|lt]` (number, date, datetime), as for records.',
    customFields: { resource: 'leads', at: 'filters' },
    scopes: ['leads:read'],
    readOnly: true,
    input: withJsonFilters(ListLeadsQuery),
    run: ({ ctx, organizationId }, input) => listLeads(ctx, organizationId, input),
  }),
  defineTool({
    name: 'get_lead',
    title: 'Get a lead',
    description: 'One lead by id, with its contact details, status, owner and duplicate link.',
    scopes: ['leads:read'],
    readOnly: true,
    input: GetInput('Lead'),
    etag: 'lead',
    run: async ({ ctx, organizationId }, { id }) => ({ lead: await getLead(ctx, organizationId, id) }),
  }),
  defineCreateTool({
    name: 'create_lead',
    title: 'Create a lead',
    description:
      'Create a lead. Only `name` is required. Phone numbers need their country code. The organization\'s assignment rules set the owner when `ownerId` is omitted. Search first to avoid creating a duplicate. The organization\'s custom lead fields (describe_object with object `leads`) go beside the standard ones, by key.',
    customFields: { resource: 'leads', at: 'body' },
    scopes: ['leads:write'],
    input: CreateLeadBody,
    openFieldErrors: customFieldErrors('leads'),
    rest: (input) => ({ path: '/leads', body: input }),
    create: async ({ ctx, caller }, trx, input) => ({ lead: await createLead(ctx, trx, caller, input) }),
  }),
  defineTool({
    name: 'update_lead',
    title: 'Update a lead',
    description: 'Change some fields of a lead: only the fields in `changes` are written; null clears an optional field. Custom lead fields (describe_object with object `leads`) are changed the same way.',
    customFields: { resource: 'leads', at: 'changes' },
    bodyAt: 'changes',
    scopes: ['leads:write'],
    readOnly: false,
    input: UpdateInput('Lead', UpdateLeadBody),
    etag: 'lead',
    openFieldErrors: customChangeErrors('leads'),
    run: async ({ ctx, caller }, { id, changes, ifMatch }) => ({ lead: await inTransaction(ctx, (trx) => updateLead(ctx, trx, caller, id, changes, { ifMatch })) }),
  }),
  defineTool({
    name: 'delete_lead',
    title: 'Delete a lead',
    description: deleteDescription('lead'),
    scopes: ['leads:write'],
    readOnly: false,
    destructive: true,
    input: DeleteInput('Lead'),
    etag: 'lead',
    run: async ({ ctx, caller }, { id, permanent, ifMatch }) => ({ lead: await inTransaction(ctx, (trx) => deleteLead(ctx, trx, caller, id, permanent === true, { ifMatch })) }),
  }),
  defineTool({
    name: 'restore_lead',
    title: 'Restore a lead',
    description: restoreDescription('lead', 'search_leads'),
    scopes: ['leads:write'],
    readOnly: false,
    input: RestoreInput('Lead'),
    etag: 'lead',
    run: async ({ ctx, caller }, { id, ifMatch }) => ({ lead: await inTransaction(ctx, (trx) => restoreLead(ctx, trx, caller, id, { ifMatch })) }),
  }),
];
