import type { TObject, TSchema } from '@sinclair/typebox';
import { Account, CreateAccountBody } from '../accounts/accounts.schemas.js';
import { CreateDealBody, Deal } from '../deals/deals.schemas.js';
import { CreateLeadBody, Lead } from '../leads/leads.schemas.js';
import type { FieldType } from '../objects/objects.schemas.js';

/** The built-in resources that take custom fields (contract §9), in the order GET /objects lists them. */
export const BUILTIN_RESOURCES = ['leads', 'accounts', 'deals'] as const;
export type BuiltinResource = (typeof BUILTIN_RESOURCES)[number];

export const isBuiltinResource = (slug: string): slug is BuiltinResource => (BUILTIN_RESOURCES as readonly string[]).includes(slug);

export interface StandardField {
  key: string;
  label: string;
  type: FieldType;
  required: boolean;
  readOnly: true;
}

export interface BuiltinShape {
  name: string;
  /** Every key of the resource as the API shows it: a custom field may not take one. */
  standard: ReadonlySet<string>;
  /** The keys a body may send (create and update). */
  writable: ReadonlySet<string>;
  /** Shown but set by the server (id, createdAt, …): sent in a body, they are `read_only`. */
  readOnly: ReadonlySet<string>;
  /** The standard fields as GET /objects lists them (read-only there). */
  fields: StandardField[];
}

function typeOf(schema: TSchema): FieldType {
  const variants: TSchema[] = schema.anyOf ?? [schema];
  if (variants.some((s) => s.format === 'date-time')) return 'datetime';
  if (variants.some((s) => s.type === 'number')) return 'number';
  return 'text';
}

const label = (key: string) => key.replace(/([A-Z])/g, ' $1').replace(/^./, (c) => c.toUpperCase());

function shape(name: string, shown: TObject, body: TObject): BuiltinShape {
  const standard = new Set(Object.keys(shown.properties));
  const writable = new Set(Object.keys(body.properties));
  return {
    name,
    standard,
    writable,
    readOnly: new Set([...standard].filter((k) => !writable.has(k))),
    fields: Object.entries(shown.properties).map(([key, schema]) => ({ key, label: label(key), type: typeOf(schema), required: key === 'name', readOnly: true as const })),
  };
}

export const BUILTIN: Record<BuiltinResource, BuiltinShape> = {
  leads: shape('Leads', Lead, CreateLeadBody),
  accounts: shape('Accounts', Account, CreateAccountBody),
  deals: shape('Deals', Deal, CreateDealBody),
};
