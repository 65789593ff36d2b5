import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { html } from '../../src/admin/html.js';
import type { NavEntry, Viewer } from '../../src/admin/module.js';
import { createShell } from '../../src/admin/shell.js';

const viewer: Viewer = {
  user: { id: 'u1', name: 'Ada <Admin>', isAdmin: true },
  organization: { id: 'o1', name: 'Acme & Co', timezone: 'UTC' },
  session: { id: 's1', csrfToken: 'token-1' },
};
const assets = { css: '/admin/assets/admin.css?v=1', js: '/admin/assets/admin.js?v=1' };
const at = (url: string) => ({ url }) as FastifyRequest;

const entries: NavEntry[] = [
  { section: 'configuration', label: 'API keys', href: '/admin/config/api-keys', order: 10 },
  { section: 'configuration', group: 'Marketplace', label: 'API and Webhooks', href: '/admin/config/webhooks', order: 50 },
  { section: 'data', label: 'Leads', href: '/admin/data/leads', order: 10 },
  { section: 'data', label: 'Deals', href: '/admin/data/deals', order: 30 },
];

describe('console shell', () => {
  it('renders only the registered entries, by section, with groups nested', () => {
    const page = createShell(entries.slice(0, 3), assets).page(at('/admin'), viewer, { title: 'Dashboard', body: html`<p>x</p>` }).value;
    expect(page).not.toContain('Deals');
    expect(page).toMatch(/<h2 class="nav-heading" id="nav-data"><a href="\/admin\/data">Data<\/a><\/h2>[\s\S]*Leads[\s\S]*id="nav-configuration"><a href="\/admin\/config">Configuration<\/a>[\s\S]*API keys[\s\S]*<a href="\/admin\/config\/marketplace" class="nav-group-label">Marketplace<\/a><ul><li><a href="\/admin\/config\/webhooks">API and Webhooks<\/a>/);
    const dataOnly = createShell(entries.slice(2, 3), assets).page(at('/admin'), viewer, { title: 'Dashboard', body: html`` }).value;
    expect(dataOnly).not.toContain('Configuration');
    expect(dataOnly).not.toContain('Marketplace');
  });

  it('marks the deepest matching entry as the current page', () => {
    const shell = createShell(entries, assets);
    const current = (url: string) => /<a href="([^"]+)"[^>]* aria-current="page"/.exec(shell.page(at(url), viewer, { title: 't', body: html`` }).value)?.[1];
    expect(current('/admin')).toBe('/admin');
    expect(current('/admin/data/leads?q=x')).toBe('/admin/data/leads');
    expect(current('/admin/data/leads/abc/edit')).toBe('/admin/data/leads');
    expect(current('/admin/config/webhooks/123/deliveries')).toBe('/admin/config/webhooks');
    expect(current('/admin/data/leadsx')).toBeUndefined();
    expect(current('/admin/config/marketplace')).toBe('/admin/config/marketplace');
    expect(current('/admin/config')).toBe('/admin/config');
  });

  it('links the crumbs that name a section, a group or an entry; custom objects of the request join the navigation', () => {
    const request = { url: '/admin/data/objects/projects/abc', orgNav: [{ section: 'data', label: 'Projects', href: '/admin/data/objects/projects', order: 100 }] } as unknown as FastifyRequest;
    const page = createShell(entries, assets).page(request, viewer, { title: 'Relaunch', crumbs: ['Data', 'Projects', 'Unlinked'], body: html`` }).value;
    expect(page).toContain('<ol><li><a href="/admin/data">Data</a></li><li><a href="/admin/data/objects/projects">Projects</a></li><li>Unlinked</li><li aria-current="page">Relaunch</li></ol>');
    expect(page).toContain('<li><a href="/admin/data/objects/projects" aria-current="page">Projects</a></li>');
    const webhooks = createShell(entries, assets).page(at('/admin/config/webhooks/new'), viewer, { title: 'Add endpoint', crumbs: ['Configuration', 'Marketplace', 'API and Webhooks'], body: html`` }).value;
    expect(webhooks).toContain('<li><a href="/admin/config/marketplace">Marketplace</a></li><li><a href="/admin/config/webhooks">API and Webhooks</a></li>');
  });

  it('escapes the organization and user names and carries the session token in the sign-out form', () => {
    const page = createShell(entries, assets).page(at('/admin'), viewer, { title: 'T', crumbs: ['Data'], body: html``, notice: 'Saved <b>' }).value;
    expect(page).toContain('Acme &amp; Co');
    expect(page).toContain('Ada &lt;Admin&gt;');
    expect(page).toContain('<input type="hidden" name="_csrf" value="token-1">');
    expect(page).toContain('<div class="notice" role="status">Saved &lt;b&gt;</div>');
    expect(page).toContain('<title>T · Data · Acme &amp; Co · CRM console</title>');
    expect(page.indexOf('class="skip-link"')).toBeLessThan(page.indexOf('<header'));
  });
});
