import type { AppContext } from '../../context.js';
import type { Field } from '../../modules/objects/definition.js';
import { getObject } from '../../modules/objects/objects.service.js';
import { findLiveRecords, listRecords } from '../../modules/objects/records.service.js';
import { own } from '../../lib/own.js';
import type { PickerItem } from '../components.js';
import { ACCOUNTS_PATH } from './accounts.views.js';
import { DEALS_PATH } from './deals.views.js';
import { LEADS_PATH } from './leads.views.js';
import { namesByIds, recentNames } from './names.store.js';
import type { CustomShown } from './custom-fields.views.js';
import { recordsPath, recordTitle, type RelatedItem, type RelationContext } from './records.views.js';

/*
 * The items relation fields point at, for the console: their names and pages (detail and table cells link
 * to them) and the newest ones of each target (the form's pickers). Leads, accounts and deals are named by
 * their `name`; records by their title field. Record pages and the custom fields of leads, accounts and deals
 * both load them here.
 */

type Ctx = Pick<AppContext, 'database' | 'cipher' | 'clock' | 'blindIndex' | 'cursorSeal' | 'config'>;
type Organization = { id: string; timezone: string };
const BUILT_IN = { leads: LEADS_PATH, accounts: ACCOUNTS_PATH, deals: DEALS_PATH } as const;
const builtIn = (target: string): target is keyof typeof BUILT_IN => Object.hasOwn(BUILT_IN, target);
const PICKER_SIZE = 50;

/** A live related item: its name and its console page. (A trashed or removed one is absent: its id shows as is.) */

const relations = (fields: readonly Field[]) => fields.filter((f): f is Field & { target: string } => f.type === 'relation' && f.target !== undefined);

/** The ids the relation fields of `rows` hold, by target (fields pointing at one target share its ids). */
function idsByTarget(fields: readonly Field[], rows: readonly Readonly<Record<string, unknown>>[]): Map<string, Set<string>> {
  const targets = new Map<string, Set<string>>();
  for (const field of relations(fields)) {
    const ids = targets.get(field.target) ?? new Set<string>();
    for (const row of rows) {
      const id = own(row, field.key);
      if (typeof id === 'string') ids.add(id);
    }
    if (ids.size) targets.set(field.target, ids);
  }
  return targets;
}

/** The live items the relation fields of `rows` point at, by id: one read per target, however many rows a page shows. */
export async function relatedItems(ctx: Ctx, organization: Organization, fields: readonly Field[], rows: readonly Readonly<Record<string, unknown>>[]): Promise<Map<string, RelatedItem>> {
  return itemsOf(ctx, organization, idsByTarget(fields, rows));
}

/** The live items of these ids, by id, given by target (`leads`, `accounts`, `deals` or an object slug): one read per target. */
export async function itemsOf(ctx: Ctx, organization: Organization, idsOfTarget: ReadonlyMap<string, ReadonlySet<string>>): Promise<Map<string, RelatedItem>> {
  const items = new Map<string, RelatedItem>();
  for (const [target, ids] of idsOfTarget) {
    if (builtIn(target)) {
      for (const [id, name] of await namesByIds(ctx.database.db, target, organization.id, [...ids])) items.set(id, { name, href: `${BUILT_IN[target]}/${id}` });
      continue;
    }
    const object = await getObject(ctx, organization.id, target).catch(() => undefined);
    if (!object) continue;
    for (const record of await findLiveRecords(ctx, ctx.database.db, organization.id, target, [...ids])) {
      items.set(record.id, { name: recordTitle(object, record), href: `${recordsPath(target)}/${record.id}` });
    }
  }
  return items;
}

/** The newest items of each relation field's target, by field key, for the form's pickers. */
async function relationChoices(ctx: Ctx, organization: Organization, fields: readonly Field[]): Promise<Record<string, PickerItem[]>> {
  const choices: Record<string, PickerItem[]> = {};
  for (const field of relations(fields)) {
    const target = field.target;
    if (builtIn(target)) {
      choices[field.key] = await recentNames(ctx.database.db, target, organization.id, PICKER_SIZE);
      continue;
    }
    const object = await getObject(ctx, organization.id, target).catch(() => undefined);
    if (!object) continue;
    const { records } = await listRecords(ctx, organization, target, { page: 1, limit: PICKER_SIZE });
    choices[field.key] = records.map((r) => ({ id: r.id, name: recordTitle(object, r) }));
  }
  return choices;
}

/** What a form's relation inputs need: the items its values point at (named under the input) and each field's newest items. */
export async function formRelations(ctx: Ctx, organization: Organization, fields: readonly Field[], values: Readonly<Record<string, string>>): Promise<RelationContext> {
  const [related, choices] = await Promise.all([relatedItems(ctx, organization, fields, [values]), relationChoices(ctx, organization, fields)]);
  return { related, choices };
}

/** A lead's, account's or deal's custom fields as a table or detail page shows them for `items`. */
export async function customShown(ctx: Ctx, organization: Organization, fields: readonly Field[], items: readonly Readonly<Record<string, unknown>>[]): Promise<CustomShown> {
  return { fields, related: await relatedItems(ctx, organization, fields, items) };
}
