import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AssetUrls } from './assets.js';
import { CSRF_FIELD } from './auth/cookies.js';
import { html, type SafeHtml } from './html.js';
import type { NavEntry, PageOptions, Viewer } from './module.js';

const PRODUCT = 'CRM console';

/** The two sections; each heading links to an overview page of its entries (pages/sections.pages.ts). */
export const SECTIONS: readonly { id: NavEntry['section']; label: string; href: string }[] = [
  { id: 'data', label: 'Data', href: '/admin/data' },
  { id: 'configuration', label: 'Configuration', href: '/admin/config' },
];

/** A group's overview page: "Marketplace" under Configuration → /admin/config/marketplace. */
export function groupHref(section: NavEntry['section'], group: string): string {
  return `${SECTIONS.find((s) => s.id === section)!.href}/${group.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '')}`;
}

/** The entry whose link is the longest prefix of the path is the current page (aria-current). */
function currentHref(entries: readonly { href: string }[], path: string): string | undefined {
  return entries
    .filter((e) => path === e.href || (e.href !== '/admin' && path.startsWith(`${e.href}/`)))
    .sort((a, b) => b.href.length - a.href.length)[0]?.href;
}

function link(entry: { href: string; label: string }, current: string | undefined): SafeHtml {
  return html`<li><a href="${entry.href}"${entry.href === current ? html` aria-current="page"` : ''}>${entry.label}</a></li>`;
}

/** An overview link (section heading, group label): the current page only on the overview itself. */
function overviewLink(href: string, label: string, path: string, className?: string): SafeHtml {
  return html`<a href="${href}"${path === href ? html` aria-current="page"` : ''}${className ? html` class="${className}"` : ''}>${label}</a>`;
}

function navigation(entries: readonly NavEntry[], path: string): SafeHtml {
  const dashboard = { href: '/admin', label: 'Dashboard' };
  const current = currentHref([dashboard, { href: '/admin/account' }, ...entries], path);
  const sections = SECTIONS.map(({ id, label, href }) => {
    const items = entries.filter((e) => e.section === id).sort((a, b) => a.order - b.order);
    if (items.length === 0) return '';
    const groups = [...new Set(items.map((e) => e.group).filter((g): g is string => g !== undefined))];
    return html`<h2 class="nav-heading" id="nav-${id}">${overviewLink(href, label, path)}</h2>
<ul aria-labelledby="nav-${id}">
  ${items.filter((e) => e.group === undefined).map((e) => link(e, current))}
  ${groups.map(
    (g) => html`<li class="nav-group">${overviewLink(groupHref(id, g), g, path, 'nav-group-label')}<ul>${items.filter((e) => e.group === g).map((e) => link(e, current))}</ul></li>`,
  )}
</ul>`;
  });
  return html`<nav class="sidenav" id="sidenav" aria-label="Console"><ul>${link(dashboard, current)}</ul>${sections}</nav>`;
}

function head(title: string, assets: AssetUrls): SafeHtml {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${assets.css}">
<script src="${assets.js}" defer></script>
</head>`;
}

/** The trail above the heading; a crumb that names a section, a group or an entry links to its page. */
function crumbs(page: PageOptions, entries: readonly NavEntry[]): SafeHtml | '' {
  if (!page.crumbs?.length) return '';
  const pages = new Map<string, string>([
    ...SECTIONS.map((s) => [s.label, s.href] as const),
    ...entries.flatMap((e) => [[e.label, e.href] as const, ...(e.group ? [[e.group, groupHref(e.section, e.group)] as const] : [])]),
  ]);
  const crumb = (c: string) => (pages.has(c) ? html`<li><a href="${pages.get(c)!}">${c}</a></li>` : html`<li>${c}</li>`);
  return html`<nav class="crumbs" aria-label="Breadcrumb"><ol>${page.crumbs.map(crumb)}<li aria-current="page">${page.title}</li></ol></nav>`;
}

function notice(text: string | undefined): SafeHtml | '' {
  return text ? html`<div class="notice" role="status">${text}</div>` : '';
}

export interface Shell {
  page(request: FastifyRequest, viewer: Viewer, page: PageOptions): SafeHtml;
  bare(page: PageOptions): SafeHtml;
}

/** The page frame: skip link, header with the organization and the user, the side navigation, then main. */
export function createShell(entries: readonly NavEntry[], assets: AssetUrls): Shell {
  return {
    page(request, viewer, page) {
      const path = request.url.split('?')[0]!;
      const all = request.orgNav ? [...entries, ...request.orgNav] : entries;
      const title = [page.title, ...[...(page.crumbs ?? [])].reverse(), viewer.organization.name, PRODUCT].join(' · ');
      return html`${head(title, assets)}
<body>
<a class="skip-link" href="#main">Skip to main content</a>
<header class="topbar">
  <a class="brand" href="/admin">${PRODUCT}</a>
  <span class="org-name">${viewer.organization.name}</span>
  <button type="button" class="menu-button" aria-controls="sidenav" aria-expanded="false" hidden>Menu</button>
  <div class="account">
    <span class="user-name">${viewer.user.name}${viewer.user.isAdmin ? html` <span class="badge badge--neutral">Admin</span>` : ''}</span>
    <a href="/admin/account">Your account</a>
    <form method="post" action="/admin/sign-out" class="inline-form"><input type="hidden" name="${CSRF_FIELD}" value="${viewer.session.csrfToken}"><button type="submit" class="linklike">Sign out</button></form>
  </div>
</header>
<div class="layout">
  ${navigation(all, path)}
  <main id="main" tabindex="-1">
    ${crumbs(page, all)}
    <h1>${page.title}</h1>
    ${notice(page.notice)}
    ${page.body}
  </main>
</div>
</body>
</html>`;
    },
    bare(page) {
      return html`${head(`${page.title} · ${PRODUCT}`, assets)}
<body class="bare">
<a class="skip-link" href="#main">Skip to main content</a>
<main id="main" tabindex="-1" class="card">
  <p class="brand">${PRODUCT}</p>
  <h1>${page.title}</h1>
  ${notice(page.notice)}
  ${page.body}
</main>
</body>
</html>`;
    },
  };
}

/** Console pages are private and never cached; they may not be framed (clickjacking) or run foreign code. */
export const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
} as const;

export function sendHtml(reply: FastifyReply, markup: SafeHtml, status = 200): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(markup.value);
}
