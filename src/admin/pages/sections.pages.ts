import type { FastifyReply, FastifyRequest } from 'fastify';
import { html, type SafeHtml } from '../html.js';
import type { AdminDeps, AdminModule, NavEntry } from '../module.js';
import { groupHref, SECTIONS } from '../shell.js';

function cards(entries: readonly NavEntry[]): SafeHtml {
  return html`<ul class="overview">${entries.map((e) => html`<li><a href="${e.href}">${e.label}</a>${e.description ? html`<p>${e.description}</p>` : ''}</li>`)}</ul>`;
}

/** A section's overview: its entries, then each group with its own. */
function sectionPage(deps: AdminDeps, request: FastifyRequest, reply: FastifyReply, section: (typeof SECTIONS)[number]) {
  const entries = deps.navOf(request).filter((e) => e.section === section.id).sort((a, b) => a.order - b.order);
  const groups = [...new Set(entries.map((e) => e.group).filter((g): g is string => g !== undefined))];
  return deps.render(request, reply, {
    title: section.label,
    body: html`${cards(entries.filter((e) => e.group === undefined))}
${groups.map((g) => html`<section class="panel" aria-labelledby="group-${groupHref(section.id, g).split('/').pop()!}"><h2 id="group-${groupHref(section.id, g).split('/').pop()!}"><a href="${groupHref(section.id, g)}">${g}</a></h2>${cards(entries.filter((e) => e.group === g))}</section>`)}`,
  });
}

/**
 * The overview pages the navigation's section headings and group labels link to (Data, Configuration,
 * Configuration › Marketplace), so every level of the path to a page is a link.
 */
export const sectionsModule: AdminModule = {
  name: 'sections',
  nav: [],
  register(app, deps) {
    for (const section of SECTIONS) {
      app.get(section.href.slice('/admin'.length), async (request, reply) => sectionPage(deps, request, reply, section));
      app.get<{ Params: { group: string } }>(`${section.href.slice('/admin'.length)}/:group`, async (request, reply) => {
        const path = `${section.href}/${request.params.group}`;
        const entries = deps.navOf(request).filter((e) => e.section === section.id && e.group !== undefined && groupHref(section.id, e.group) === path);
        if (entries.length === 0) return reply.callNotFound();
        return deps.render(request, reply, { title: entries[0]!.group!, crumbs: [section.label], body: cards([...entries].sort((a, b) => a.order - b.order)) });
      });
    }
  },
};
