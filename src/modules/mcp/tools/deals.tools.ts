import { Type } from '@sinclair/typebox';
import { inTransaction } from '../../../db/transaction.js';
import { CreateDealBody, ListDealsQuery, UpdateDealBody } from '../../deals/deals.schemas.js';
import { createDeal, deleteDeal, getDeal, listDeals, restoreDeal, updateDeal } from '../../deals/deals.service.js';
import { getDealStages } from '../../deals/stages.service.js';
import { defineCreateTool, defineTool, deleteDescription, DeleteInput, GetInput, IdArg, IfMatchArg, UpdateInput, customFieldErrors, customChangeErrors, withJsonFilters , RestoreInput, restoreDescription } from '../mcp.tool.js';

export const dealTools = [
  defineTool({
    name: 'list_deal_stages',
    title: 'List the deal stages',
    description: "The organization's deal pipeline in order: each stage's `key` (what `stage` fields take), `label` and `kind` (open, won or lost).",
    scopes: ['deals:read'],
    readOnly: true,
    input: Type.Object({}, { additionalProperties: false }),
    run: async ({ ctx, organizationId }) => ({ stages: await getDealStages(ctx.database.db, organizationId) }),
  }),
  defineTool({
    name: 'search_deals',
    title: 'Search deals',
    description:
      'Find deals, filtered by `stage` (a stage key), `accountId`, `leadId`, `ownerId` and `q` (case-insensitive substring of the name); the filters combine. `sort` orders the list (default `-createdAt`, newest first; also createdAt, updatedAt, -updatedAt, name, -name); `createdAfter`/`createdBefore`/`updatedAfter`/`updatedBefore` take ISO instants. Paged with `limit` (max 100): pass `pagination.nextCursor` back as `after` for the next page (null on the last). Custom fields filter with `filter[<key>]` (equality) and `filter[<key>][gte|lte|gt|lt]` (number, date, datetime), as for records.',
    customFields: { resource: 'deals', at: 'filters' },
    scopes: ['deals:read'],
    readOnly: true,
    input: withJsonFilters(ListDealsQuery),
    run: ({ ctx, organizationId }, input) => listDeals(ctx, organizationId, input),
  }),
  defineTool({
    name: 'get_deal',
    title: 'Get a deal',
    description: 'One deal by id: stage, amount (a decimal string) and currency, account, lead, owner, expected close date.',
    scopes: ['deals:read'],
    readOnly: true,
    input: GetInput('Deal'),
    etag: 'deal',
    run: async ({ ctx, organizationId }, { id }) => ({ deal: await getDeal(ctx, organizationId, id) }),
  }),
  defineCreateTool({
    name: 'create_deal',
    title: 'Create a deal',
    description:
      "Create a deal. Only `name` is required; `stage` defaults to the first stage (see list_deal_stages). Send `amount` as a decimal string with `currency` (ISO 4217), and `expectedCloseDate` as YYYY-MM-DD. The organization's custom deal fields (describe_object with object `deals`) go beside the standard ones, by key.",
    customFields: { resource: 'deals', at: 'body' },
    scopes: ['deals:write'],
    input: CreateDealBody,
    openFieldErrors: customFieldErrors('deals'),
    rest: (input) => ({ path: '/deals', body: input }),
    create: async ({ ctx, caller }, trx, input) => ({ deal: await createDeal(ctx, trx, caller, input) }),
  }),
  defineTool({
    name: 'update_deal',
    title: 'Update a deal',
    description: 'Change some fields of a deal: only the fields in `changes` are written; null clears an optional field. To move it along the pipeline, move_deal_stage is simpler. Custom deal fields (describe_object with object `deals`) are changed the same way.',
    customFields: { resource: 'deals', at: 'changes' },
    bodyAt: 'changes',
    scopes: ['deals:write'],
    readOnly: false,
    input: UpdateInput('Deal', UpdateDealBody),
    etag: 'deal',
    openFieldErrors: customChangeErrors('deals'),
    run: async ({ ctx, caller }, { id, changes, ifMatch }) => ({ deal: await inTransaction(ctx, (trx) => updateDeal(ctx, trx, caller, id, changes, { ifMatch })) }),
  }),
  defineTool({
    name: 'move_deal_stage',
    title: 'Move a deal to another stage',
    description: 'Move a deal to another stage of the pipeline (any move between defined stages is allowed, e.g. to won or lost). An unknown stage is refused with the allowed keys. Records deal.stage_changed.',
    scopes: ['deals:write'],
    readOnly: false,
    input: Type.Object(
      { id: IdArg('Deal'), stage: Type.String({ minLength: 1, maxLength: 50, description: 'Key of the target stage (see list_deal_stages).' }), ifMatch: Type.Optional(IfMatchArg('Deal')) },
      { additionalProperties: false },
    ),
    etag: 'deal',
    run: async ({ ctx, caller }, { id, stage, ifMatch }) => ({ deal: await inTransaction(ctx, (trx) => updateDeal(ctx, trx, caller, id, { stage }, { ifMatch })) }),
  }),
  defineTool({
    name: 'delete_deal',
    title: 'Delete a deal',
    description: deleteDescription('deal'),
    scopes: ['deals:write'],
    readOnly: false,
    destructive: true,
    input: DeleteInput('Deal'),
    etag: 'deal',
    run: async ({ ctx, caller }, { id, permanent, ifMatch }) => ({ deal: await inTransaction(ctx, (trx) => deleteDeal(ctx, trx, caller, id, permanent === true, { ifMatch })) }),
  }),
  defineTool({
    name: 'restore_deal',
    title: 'Restore a deal',
    description: restoreDescription('deal', 'search_deals'),
    scopes: ['deals:write'],
    readOnly: false,
    input: RestoreInput('Deal'),
    etag: 'deal',
    run: async ({ ctx, caller }, { id, ifMatch }) => ({ deal: await inTransaction(ctx, (trx) => restoreDeal(ctx, trx, caller, id, { ifMatch })) }),
  }),
];
