import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import type { Actor } from '../modules/orgs/principal.js';
import type { SafeHtml } from './html.js';

/**
 * Who may reach a console route: `public` (sign-in, setup, assets), `member` (any signed-in user: browse
 * data, edit CRM records), `admin` (configuration changes). Checked for every route by the guard (guard.ts).
 */
export type Access = 'public' | 'member' | 'admin';

/** The signed-in user of a console request. */
export interface Viewer {
  user: { id: string; name: string; isAdmin: boolean };
  organization: { id: string; name: string; timezone: string };
  session: { id: string; csrfToken: string };
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Console routes: who may call it (default `member`). */
    console?: { access: Access };
  }
  interface FastifyRequest {
    viewer: Viewer | null;
    /** Navigation entries of this viewer's organization (its custom objects), added by modules' `navFor`. */
    orgNav: NavEntry[] | null;
  }
}

/**
 * One entry of the side navigation. `section` places it under Data or Configuration; `group` nests it one
 * level deeper (Configuration › Marketplace › API and Webhooks). Entries come only from registered modules,
 * so a link exists exactly when its pages do.
 */
export interface NavEntry {
  section: 'data' | 'configuration';
  group?: string;
  label: string;
  href: string;
  order: number;
  /** One line on the section's overview page (Data, Configuration, a group). */
  description?: string;
}

export interface PageOptions {
  title: string;
  /** Breadcrumb trail above the heading, e.g. ['Configuration']; the title ends it. */
  crumbs?: readonly string[];
  body: SafeHtml;
  status?: number;
  /** A one-line confirmation shown above the content (role=status). */
  notice?: string | undefined;
}

export interface AdminDeps {
  ctx: AppContext;
  /** Renders a full page in the console shell (navigation, header, skip link) and sends it. */
  render(request: FastifyRequest, reply: FastifyReply, page: PageOptions): FastifyReply;
  /** The console page of a record named by an event (`lead`, `deal`…), when a module shows that kind. */
  objectHref(object: string, id: string, objectSlug?: string): string | undefined;
  /** Every navigation entry this request's viewer sees: the modules' own and their organization's (custom objects). */
  navOf(request: FastifyRequest): readonly NavEntry[];
}

/** Where a module shows one kind of record: a base path (`<path>/<id>`), or a function for kinds that need more. */
export type ObjectPage = string | ((id: string, objectSlug: string | undefined) => string | undefined);

/**
 * A console feature: its navigation entries and its routes (registered under /admin). New features (accounts,
 * deals, custom objects, webhooks) add one module to ADMIN_MODULES in modules.ts.
 */
export interface AdminModule {
  name: string;
  nav: readonly NavEntry[];
  /** Event object kinds whose records this module shows at `<path>/<id>`, e.g. `{lead: '/admin/data/leads'}`. */
  objectPages?: Readonly<Record<string, ObjectPage>>;
  /**
   * Entries that depend on the organization (one per custom object), read once per request of a signed-in
   * user; static entries belong in `nav`.
   */
  navFor?(deps: AdminDeps, viewer: Viewer): Promise<NavEntry[]>;
  register(app: FastifyInstance, deps: AdminDeps): void;
}

/** The viewer of a route that requires sign-in (the guard has run). */
export function viewerOf(request: FastifyRequest): Viewer {
  if (!request.viewer) throw new Error('console route reached without a signed-in viewer');
  return request.viewer;
}

/** What services need to change data on behalf of a console user: events carry `{type: USER, channel: UI}`. */
export function callerOfViewer(viewer: Viewer): { organizationId: string; actor: Actor } {
  return { organizationId: viewer.organization.id, actor: { type: 'USER', id: viewer.user.id, channel: 'UI' } };
}
