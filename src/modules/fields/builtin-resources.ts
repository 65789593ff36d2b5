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
  /** A `select`'s values (the enumeration the API checks). */
  options?: string[];
  /** A `relation`'s kind of item. */
  target?: string;
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

const variantsOf = (schema: TSchema | undefined): TSchema[] => (schema ? schema.anyOf ?? [schema] : []);

/** The body's formats that are field types of their own: what a client must send there. */
const FORMAT_TYPES: Readonly<Record<string, FieldType>> = { email: 'email', phone: 'phone', uri: 'url' };

/**
 * A standard field's type as a custom field of the same kind would have it, from the shown schema and the body's:
 * an e-mail, phone or URL by the format the body checks; a day (`expectedCloseDate`) is shown as an instant but
 * written as a date without a format, unlike the server-set instants (`createdAt`), which no body takes.
 */
function typeOf(shown: TSchema, written: TSchema | undefined): FieldType {
  const formatted = variantsOf(written).find((s) => typeof s.format === 'string' && s.format in FORMAT_TYPES);
  if (formatted) return FORMAT_TYPES[formatted.format as string]!;
  const variants = variantsOf(shown);
  if (variants.some((s) => s.format === 'date-time')) return written ? 'date' : 'datetime';
  if (variants.some((s) => s.type === 'number')) return 'number';
  return 'text';
}

/** The standard fields that hold the id of another item, as a relation field to it would. */
const TARGETS: Readonly<Record<string, string>> = { accountId: 'accounts', leadId: 'leads', duplicateOf: 'leads' };

/** A standard field as a custom field of the same kind would be defined: type, and its options or target. */
function standardField(key: string, shown: TSchema, written: TSchema | undefined): StandardField {
  const base = { key, label: label(key), required: key === 'name', readOnly: true as const };
  const options = variantsOf(shown).find((s) => Array.isArray(s.enum))?.enum as string[] | undefined;
  if (options) return { ...base, type: 'select', options: [...options] };
  if (key in TARGETS) return { ...base, type: 'relation', target: TARGETS[key]! };
  return { ...base, type: typeOf(shown, written) };
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
    fields: Object.entries(shown.properties).map(([key, schema]) => standardField(key, schema, body.properties[key])),
  };
}

export const BUILTIN: Record<BuiltinResource, BuiltinShape> = {
  leads: shape('Leads', Lead, CreateLeadBody),
  accounts: shape('Accounts', Account, CreateAccountBody),
  deals: shape('Deals', Deal, CreateDealBody),
};
