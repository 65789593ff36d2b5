import { Type } from '@sinclair/typebox';
import { inTransaction } from '../../../db/transaction.js';
import { ListObjectsQuery } from '../../objects/objects.schemas.js';
import { getObject, listObjects } from '../../objects/objects.service.js';
import { ListRecordsQuery, RecordInput, RecordPatch } from '../../objects/records.schemas.js';
import { createRecord, deleteRecord, getRecord, listRecords, restoreRecord, updateRecord } from '../../objects/records.service.js';
import { defineCreateTool, defineTool, deleteDescription, DeleteInput, IdArg, IfMatchArg, RestoreInput, restoreDescription, withJsonFilters } from '../mcp.tool.js';

const objectArg = Type.String({ minLength: 1, maxLength: 100, description: 'Slug of the custom object (see list_objects).' });

const VALUE_RULES =
  'Keys are the field keys from describe_object. text/long_text/url/email: strings; number: a number; boolean: true/false; date: YYYY-MM-DD; datetime: an ISO 8601 timestamp with Z or an offset; select: one of the field\'s options; multi_select: an array of distinct options ([] or null clears; read back in the field\'s option order); relation: the id of a live item of the field\'s target (leads, accounts, deals or an object slug — find it with that kind\'s list tool); phone: international format with the country code. `stage`: one of the object\'s stage keys.';

export const recordTools = [
  defineTool({
    name: 'list_objects',
    title: 'List custom objects',
    description: "The organization's objects: its custom objects (e.g. projects, tickets: slug, name, fields and stages), whose slugs the record tools take, then the built-in leads, accounts and deals with their custom fields (use their own tools: search_leads, create_lead…). `sort` (createdAt, updatedAt, name; - for descending; default -createdAt) orders the custom objects; the built-ins always follow them.",
    scopes: ['records:read', 'objects:admin'],
    readOnly: true,
    input: ListObjectsQuery,
    run: ({ ctx, organizationId }, input) => listObjects(ctx, organizationId, input),
  }),
  defineTool({
    name: 'describe_object',
    title: "Describe a custom object's fields",
    description: 'The fields of one custom object — key, label, type, required, options of select and multi_select fields, the target of relation fields (leads, accounts, deals or an object slug), the due-date field (role due) — and its stages in order. Read it before creating or updating records of that object.',
    scopes: ['records:read', 'objects:admin'],
    readOnly: true,
    input: Type.Object({ object: objectArg }, { additionalProperties: false }),
    run: async ({ ctx, organizationId }, { object }) => ({ object: await getObject(ctx, organizationId, object) }),
  }),
  defineTool({
    name: 'search_records',
    title: 'Search records of a custom object',
    description:
      "Find records of one object, newest first: `q` is a case-insensitive substring of its text fields, `stage` a stage key, `overdue: true` keeps records whose due date is before the organization's local today. Field filters (see describe_object): `filter[<key>]` for equality on select, boolean, text, email, phone, number, date and datetime fields, the records holding an option on a multi_select, the records pointing at an item id on a relation (reverse lookup); `filter[<key>][gte|lte|gt|lt]` for ranges on number, date and datetime fields; a value is a string, or a JSON number for a number field and true/false for a boolean field (`{\"filter[amount][gte]\": 100}`, `{\"filter[done]\": true}`). `sort`: createdAt, updatedAt or a date/number field key, `-` for descending (default -createdAt). Time filters createdAfter/createdBefore/updatedAfter/updatedBefore. Paged with `limit` (max 100): pass `pagination.nextCursor` back as `after`.",
    scopes: ['records:read'],
    readOnly: true,
    // filter[<key>] parameters are pattern properties of the list query: they must reach the service, which checks them.
    input: withJsonFilters(Type.Object({ object: objectArg, ...ListRecordsQuery.properties })),
    run: ({ ctx, principal }, { object, ...query }) => listRecords(ctx, principal.organization, object, query),
  }),
  defineTool({
    name: 'get_record',
    title: 'Get a record',
    description: 'One record of a custom object by id: flat, one property per field (null when unset), plus stage.',
    scopes: ['records:read'],
    readOnly: true,
    input: Type.Object({ object: objectArg, id: IdArg('Record') }, { additionalProperties: false }),
    etag: 'record',
    run: async ({ ctx, organizationId }, { object, id }) => ({ record: await getRecord(ctx, organizationId, object, id) }),
  }),
  defineCreateTool({
    name: 'create_record',
    title: 'Create a record',
    description: `Create a record of a custom object from \`values\`. ${VALUE_RULES} Required fields must be given; unknown keys are refused. The stage defaults to the first one.`,
    bodyAt: 'values',
    scopes: ['records:write'],
    input: Type.Object({ object: objectArg, values: RecordInput }, { additionalProperties: false }),
    rest: ({ object, values }) => ({ path: `/objects/${encodeURIComponent(object)}/records`, body: values }),
    create: async ({ ctx, caller }, trx, { object, values }) => ({ record: await createRecord(ctx, trx, caller, object, values) }),
  }),
  defineTool({
    name: 'update_record',
    title: 'Update a record',
    description: `Change some fields of a record, or move it to another stage with \`{"stage": "<key>"}\`: only the keys in \`changes\` are written; null clears a field that is not required. ${VALUE_RULES}`,
    bodyAt: 'changes',
    scopes: ['records:write'],
    readOnly: false,
    input: Type.Object({ object: objectArg, id: IdArg('Record'), changes: RecordPatch, ifMatch: Type.Optional(IfMatchArg('Record')) }, { additionalProperties: false }),
    etag: 'record',
    run: async ({ ctx, caller }, { object, id, changes, ifMatch }) => ({ record: await inTransaction(ctx, (trx) => updateRecord(ctx, trx, caller, object, id, changes as Record<string, unknown>, { ifMatch })) }),
  }),
  defineTool({
    name: 'delete_record',
    title: 'Delete a record',
    description: deleteDescription('record'),
    scopes: ['records:write'],
    readOnly: false,
    destructive: true,
    input: Type.Object({ object: objectArg, ...DeleteInput('Record').properties }, { additionalProperties: false }),
    etag: 'record',
    run: async ({ ctx, caller }, { object, id, permanent, ifMatch }) => ({ record: await inTransaction(ctx, (trx) => deleteRecord(ctx, trx, caller, object, id, permanent === true, { ifMatch })) }),
  }),
  defineTool({
    name: 'restore_record',
    title: 'Restore a record',
    description: restoreDescription('record', 'search_records'),
    scopes: ['records:write'],
    readOnly: false,
    input: Type.Object({ object: objectArg, ...RestoreInput('Record').properties }, { additionalProperties: false }),
    etag: 'record',
    run: async ({ ctx, caller }, { object, id, ifMatch }) => ({ record: await inTransaction(ctx, (trx) => restoreRecord(ctx, trx, caller, object, id, { ifMatch })) }),
  }),
];
