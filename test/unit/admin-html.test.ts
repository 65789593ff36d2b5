import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { escapeHtml, href, html, raw, SafeHtml } from '../../src/admin/html.js';
import { safeNext } from '../../src/admin/guard.js';
import { deviceLabel } from '../../src/admin/pages/account.pages.js';

const unescape = (s: string) => s.replace(/&lt;|&gt;|&quot;|&#39;|&#96;|&amp;/g, (e) => ({ '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'", '&#96;': '`', '&amp;': '&' })[e]!);

describe('html tagged template', () => {
  it('escapes interpolated text in content and attributes', () => {
    const name = `<script>alert("x")</script> & 'y' \`z\``;
    expect(html`<p title="${name}">${name}</p>`.value).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39; &#96;z&#96;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39; &#96;z&#96;</p>',
    );
  });

  it('passes nested templates and raw markup through, escaping only their values', () => {
    const item = (s: string) => html`<li>${s}</li>`;
    expect(html`<ul>${['a<b', 'c&d'].map(item)}</ul>`.value).toBe('<ul><li>a&lt;b</li><li>c&amp;d</li></ul>');
    expect(html`${raw('<br>')}`.value).toBe('<br>');
  });

  it('renders nothing for false, null and undefined, and numbers as text', () => {
    expect(html`[${false}${null}${undefined}${0}${''}]`.value).toBe('[0]');
  });

  it('never lets a string become markup (property)', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        const out = html`<a title="${s}">${s}</a>`.value;
        const inner = escapeHtml(s);
        expect(inner).not.toMatch(/[<>"'`]/);
        expect(unescape(inner)).toBe(s);
        expect(out).toBe(`<a title="${inner}">${inner}</a>`);
      }),
    );
  });

  it('only treats SafeHtml instances as markup, not look-alike objects', () => {
    const fake = { value: '<b>' } as unknown as SafeHtml;
    expect(html`${fake}`.value).toBe('[object Object]');
    expect(html`${new SafeHtml('<b>')}`.value).toBe('<b>');
  });
});

describe('href', () => {
  it('encodes query values and drops empty ones', () => {
    expect(href('/admin/data/leads', { q: 'a&b=c <d>', page: 2, empty: '', none: undefined })).toBe('/admin/data/leads?q=a%26b%3Dc+%3Cd%3E&page=2');
    expect(href('/admin')).toBe('/admin');
  });
});

describe('safeNext', () => {
  it('keeps console paths and refuses everything else', () => {
    expect(safeNext('/admin/data/leads?q=x')).toBe('/admin/data/leads?q=x');
    expect(safeNext('/admin')).toBe('/admin');
    for (const bad of ['//evil.example', 'https://evil.example', '/admin//evil.example', '/administrator', '/admin\\evil', '/api/public/v1/me', undefined, 5]) {
      expect(safeNext(bad)).toBe('/admin');
    }
  });
});

describe('deviceLabel', () => {
  it('names the browser and system of common user agents', () => {
    expect(deviceLabel('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36')).toBe('Chrome on Linux');
    expect(deviceLabel('Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15')).toBe('Safari on macOS');
    expect(deviceLabel('Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0')).toBe('Firefox on Windows');
    expect(deviceLabel('curl/8.5.0')).toBe('Unknown browser');
  });
});
