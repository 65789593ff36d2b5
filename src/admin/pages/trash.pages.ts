import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Executor } from '../../db/database.js';
import { inTransaction } from '../../db/transaction.js';
import { DEFAULT_LIMIT, type Pagination } from '../../lib/pagination.js';
import type { Caller } from '../../modules/shared/caller.js';
import { actionForm, dataTable, pager } from '../components.js';
import { queryPage, queryText } from '../forms.js';
import { timeTag } from '../format.js';
import { html, type SafeHtml } from '../html.js';
import { callerOfViewer, viewerOf, type AdminDeps, type Viewer } from '../module.js';

type Params = Record<string, string>;

/** A trashed item as its Trash page lists it. */
export interface TrashRow {
  id: string;
  name: string;
  deletedAt: string | null;
}

/** What a console resource hands over to get its Delete action and its Trash page with Restore and Delete for good. */
export interface ConsoleTrashSpec {
  /** The resource's list route under /admin, Fastify syntax: `/data/leads`, `/data/objects/:slug`. */
  route: string;
  /** That list's href for a request's params. */
  href(params: Params): string;
  /** The list's title ("Leads") and the breadcrumbs above it. */
  title(viewer: Viewer, params: Params): Promise<{ title: string; crumbs: string[] }>;
  noun: string;
  trash(viewer: Viewer, params: Params, page: number): Promise<{ items: TrashRow[]; pagination: Pagination }>;
  remove(trx: Executor, caller: Caller, params: Params, id: string): Promise<unknown>;
  restore(trx: Executor, caller: Caller, params: Params, id: string): Promise<unknown>;
  /** The API's permanent delete, of an item in the trash only (a live one is not found). */
  purge(trx: Executor, caller: Caller, params: Params, id: string): Promise<unknown>;
}

/** The record page's Delete button: a confirmed POST that moves the item to the trash. */
export function deleteButton(request: FastifyRequest, listHref: string, id: string, what: string): SafeHtml {
  return actionForm(request, `${listHref}/${id}/delete`, 'Delete', {
    variant: 'danger',
    confirm: `Move ${what} to the trash? It can be restored from the Trash page until it is purged.`,
    accessibleName: `Delete ${what}`,
  });
}

export const trashLink = (listHref: string): SafeHtml => html`<a class="button button--secondary" href="${listHref}/trash">Trash</a>`;

const NOTICES: Record<string, string> = { deleted: 'Moved to the trash.', restored: 'Restored.', purged: 'Deleted for good.' };

/** A Trash page row's actions: Restore for everyone, Delete for good for administrators. */
function rowActions(request: FastifyRequest, viewer: Viewer, itemHref: string, name: string): SafeHtml {
  const restore = actionForm(request, `${itemHref}/restore`, 'Restore', { accessibleName: `Restore ${name}` });
  if (!viewer.user.isAdmin) return restore;
  return html`${restore} ${actionForm(request, `${itemHref}/purge`, 'Delete for good', {
    variant: 'danger',
    confirm: `Delete ${name} for good? This cannot be undone.`,
    accessibleName: `Delete ${name} for good`,
  })}`;
}

/**
 * Registers `<route>/trash`, `<route>/:id/delete`, `<route>/:id/restore` and `<route>/:id/purge` (administrators
 * only) for one resource.
 */
export function registerConsoleTrash(app: FastifyInstance, deps: AdminDeps, spec: ConsoleTrashSpec): void {
  const { ctx } = deps;
  const retention = ctx.config.trashRetentionDays;
  app.get<{ Params: Params }>(`${spec.route}/trash`, async (request, reply) => {
    const viewer = viewerOf(request);
    const href = spec.href(request.params);
    const [{ title, crumbs }, { items, pagination }] = await Promise.all([spec.title(viewer, request.params), spec.trash(viewer, request.params, queryPage(request))]);
    const rows = items.map(
      (item) => html`<tr>
  <td>${item.name}</td>
  <td>${timeTag(item.deletedAt, viewer.organization.timezone)}</td>
  <td>${rowActions(request, viewer, `${href}/${item.id}`, item.name)}</td>
</tr>`,
    );
    return deps.render(request, reply, {
      title: `${title}: trash`,
      crumbs: [...crumbs, title],
      notice: NOTICES[queryText(request, 'notice')],
      body: html`<p>Deleted ${spec.noun}s stay here for ${retention} days, newest deletion first; then they are removed for good.</p>
${dataTable(`Deleted ${spec.noun}s`, ['Name', 'Deleted', ''], rows, `The trash is empty.`)}${pager(`${href}/trash`, {}, { ...pagination, limit: DEFAULT_LIMIT })}`,
    });
  });
  app.post<{ Params: Params & { id: string } }>(`${spec.route}/:id/delete`, async (request, reply) => {
    const viewer = viewerOf(request);
    await inTransaction(ctx, (trx) => spec.remove(trx, callerOfViewer(viewer), request.params, request.params.id));
    return reply.redirect(`${spec.href(request.params)}/trash?notice=deleted`, 303);
  });
  app.post<{ Params: Params & { id: string } }>(`${spec.route}/:id/restore`, async (request, reply) => {
    const viewer = viewerOf(request);
    await inTransaction(ctx, (trx) => spec.restore(trx, callerOfViewer(viewer), request.params, request.params.id));
    return reply.redirect(`${spec.href(request.params)}/trash?notice=restored`, 303);
  });
  app.post<{ Params: Params & { id: string } }>(`${spec.route}/:id/purge`, { config: { console: { access: 'admin' } } }, async (request, reply) => {
    const viewer = viewerOf(request);
    await inTransaction(ctx, (trx) => spec.purge(trx, callerOfViewer(viewer), request.params, request.params.id));
    return reply.redirect(`${spec.href(request.params)}/trash?notice=purged`, 303);
  });
}
