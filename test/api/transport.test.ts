import { request as httpsRequest } from 'node:https';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAppWithSharedSchemas, buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';
import { selfSignedCertificate } from '../helpers/tls.js';
import { rawConnect } from '../helpers/raw-socket.js';

function httpsGet(url: string, ca: Buffer): Promise<{ status: number; headers: Record<string, unknown>; body: string; protocol: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { ca }, (res) => {
      const protocol = (res.socket as unknown as { getProtocol(): string }).getProtocol();
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body, protocol }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('HTTPS when TLS_CERT_FILE and TLS_KEY_FILE are set', () => {
  let t: TestApp;
  let cert: ReturnType<typeof selfSignedCertificate>;
  let base: string;
  beforeAll(async () => {
    cert = selfSignedCertificate();
    t = await buildTestApp({ env: { TLS_CERT_FILE: cert.certFile, TLS_KEY_FILE: cert.keyFile } });
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = address.replace('127.0.0.1', 'localhost');
  });
  afterAll(() => t.close());

  it('serves the API over TLS with HSTS', async () => {
    expect(base).toMatch(/^https:\/\//);
    const res = await httpsGet(`${base}/health`, cert.cert);
    expect(res.status).toBe(200);
    expect(res.protocol).toMatch(/^TLSv1\.[23]$/);
    expect(res.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
  });

  it('refuses a client that does not trust the certificate (it is really TLS, not plain HTTP)', async () => {
    await expect(httpsGet(`${base}/health`, Buffer.from(''))).rejects.toThrow(/self.signed|certificate/i);
  });
});

describe('security headers', () => {
  let t: TestApp;
  let s: Seeded;
  beforeAll(async () => {
    t = await buildTestApp();
    s = await seedOrg(t.ctx);
  });
  afterAll(() => t.close());

  it('API answers, successes and errors alike: nosniff, no referrer, no-store, no HSTS over plain HTTP', async () => {
    for (const res of [await call(t.app, 'GET', '/me', { auth: s.auth }), await call(t.app, 'GET', '/me'), await call(t.app, 'GET', '/nope'), await call(t.app, 'POST', '/leads', { auth: s.auth, body: '{' })]) {
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['strict-transport-security']).toBeUndefined();
      expect(res.headers['x-frame-options']).toBeUndefined();
    }
  });

  it('the API reference can never be framed, and keeps its own content security policy', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-frame-options']).toBe('DENY');
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("frame-ancestors 'self'");
    expect(csp).toContain("default-src 'self'");
  });

  it('a console path is never framed either, even when nothing is served there', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/admin' });
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    const lookalike = await t.app.inject({ method: 'GET', url: '/administrator' });
    expect(lookalike.headers['x-frame-options']).toBeUndefined();
  });
});

describe('requests without Host', () => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await buildTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as { port: number }).port;
  });
  afterAll(() => t.close());

  const bodyOf = (text: string) => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));

  it('an HTTP/1.1 request without Host gets 400 MALFORMED_REQUEST in the envelope, with X-Request-Id, and the connection closes', async () => {
    const c = await rawConnect(port);
    c.write('GET /health HTTP/1.1\r\n\r\n');
    const text = await c.waitFor(/\r\n\r\n\{.*\}$/s);
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    const id = /\r\nx-request-id: ([^\r]+)\r\n/i.exec(text)?.[1];
    expect(id).toBeTruthy();
    expect(bodyOf(text)).toMatchObject({ status: false, code: 'MALFORMED_REQUEST', message: expect.stringContaining('Host'), requestId: id });
    await c.closed;
  });

  it('an HTTP/1.0 request may omit it', async () => {
    const c = await rawConnect(port);
    c.write('GET /health HTTP/1.0\r\n\r\n');
    const text = await c.waitFor(/\r\n\r\n\{.*\}$/s);
    expect(text).toMatch(/^HTTP\/1\.[01] 200 /);
    expect(bodyOf(text)).toMatchObject({ status: true });
    c.socket.destroy();
  });
});

/** X-Forwarded-For / -Proto count only behind a trusted proxy (TRUST_PROXY): otherwise any client could forge them. */
describe('TRUST_PROXY', () => {
  async function logged(env: Record<string, string>) {
    const t = await buildTestApp({ env: { LOG_LEVEL: 'info', ...env } });
    const lines: string[] = [];
    const app = await buildAppWithSharedSchemas(t.ctx, { logger: { stream: new Writable({ write(chunk, _e, cb) { lines.push(chunk.toString()); cb(); } }) } });
    try {
      const res = await app.inject({ method: 'GET', url: '/health', headers: { 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'https' }, remoteAddress: '10.0.0.2' });
      const entry = lines.map((l) => JSON.parse(l)).find((e) => e.msg === 'request completed');
      return { ip: entry?.req?.ip, hsts: res.headers['strict-transport-security'] };
    } finally {
      await app.close();
      await t.close();
    }
  }

  it('unset: the peer address is the client, forwarded headers are ignored', async () => {
    expect(await logged({})).toEqual({ ip: '10.0.0.2', hsts: undefined });
  });

  it('set: the forwarded client address is logged and HTTPS at the proxy earns HSTS', async () => {
    expect(await logged({ TRUST_PROXY: 'true' })).toEqual({ ip: '203.0.113.7', hsts: 'max-age=31536000; includeSubDomains' });
  });
});

describe('configuration', () => {
  it('refuses a certificate without its key', async () => {
    await expect(buildTestApp({ env: { TLS_CERT_FILE: '/tmp/cert.pem' } })).rejects.toThrow(/TLS_CERT_FILE and TLS_KEY_FILE/);
  });
});
