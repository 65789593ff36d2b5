import { describe, expect, it } from 'vitest';
import { trickle } from '../helpers/raw-socket.js';
import { useRawServer } from '../helpers/raw-server.js';

/** A real listening server with short, test-sized limits; every client here is a raw TCP socket. */
const LIMITS = {
  HTTP_HEADERS_TIMEOUT_MS: '500',
  HTTP_REQUEST_TIMEOUT_MS: '1000',
  HTTP_CONNECTION_TIMEOUT_MS: '5000',
  HTTP_KEEP_ALIVE_TIMEOUT_MS: '400',
  HTTP_MAX_CONNECTIONS: '12',
  HTTP_MAX_REQUESTS_PER_SOCKET: '3',
  BODY_LIMIT_BYTES: '65536',
};
/** Node checks the timeouts on a timer (a quarter of the shortest one here); scheduling on a busy CI box adds more. */
const SLACK_MS = 1_500;

const server = useRawServer(LIMITS);
const connect = server.connect;

function envelopeOf(text: string): Record<string, unknown> {
  return JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
}

describe('oversized bodies', () => {
  it('a declared Content-Length over the limit is refused with 413 before the body is sent', async () => {
    const c = await connect();
    c.write(`POST /api/public/v1/leads HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.key}\r\nContent-Type: application/json\r\nContent-Length: 10485760\r\n\r\n{"name":"`);
    const text = await c.waitFor(/\r\n\r\n\{.*\}$/s);
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(envelopeOf(text)).toMatchObject({ status: false, code: 'PAYLOAD_TOO_LARGE' });
  });

  it('a chunked body is cut off with 413 once it passes the limit, not read to its end', async () => {
    const c = await connect();
    c.write(`POST /api/public/v1/leads HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
    const chunk = 'a'.repeat(16_384);
    let sent = 0;
    while (!/\r\n\r\n\{/.test(c.received()) && !c.socket.destroyed && sent < 4_000_000) {
      c.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
      sent += chunk.length;
      await new Promise((r) => setTimeout(r, 5));
    }
    const text = await c.waitFor(/\r\n\r\n\{.*\}$/s);
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(envelopeOf(text)).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect(sent).toBeLessThan(1_000_000);
  });
});

describe('slow clients', () => {
  it('headers trickling in are cut off at HTTP_HEADERS_TIMEOUT_MS with 408 in the error envelope', async () => {
    const c = await connect();
    const headers = (function* () {
      yield 'GET /health HTTP/1.1\r\nHost: x\r\n';
      for (let i = 0; ; i++) yield `X-Slow-${i}: y\r\n`;
    })();
    void trickle(c, headers, 100);
    const after = await c.closed;
    expect(after).toBeGreaterThanOrEqual(450);
    expect(after).toBeLessThan(500 + SLACK_MS);
    expect(c.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(envelopeOf(c.received())).toMatchObject({ status: false, code: 'REQUEST_TIMEOUT', requestId: expect.any(String) });
  });

  it('a body trickling in is cut off at HTTP_REQUEST_TIMEOUT_MS', async () => {
    const c = await connect();
    c.write(`POST /api/public/v1/leads HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`);
    void trickle(c, Array.from({ length: 1000 }, () => ' '), 100);
    const after = await c.closed;
    expect(after).toBeGreaterThanOrEqual(950);
    expect(after).toBeLessThan(1000 + SLACK_MS);
    expect(c.received()).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('a connection that never sends anything is closed at the headers timeout', async () => {
    const c = await connect();
    expect(await c.closed).toBeLessThan(500 + SLACK_MS);
  });
});

describe('idle and excess connections', () => {
  it('an idle keep-alive connection is closed after HTTP_KEEP_ALIVE_TIMEOUT_MS', async () => {
    const c = await connect();
    c.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    await c.waitFor(/\r\n\r\n\{.*\}$/s);
    const answeredAt = Date.now();
    await c.closed;
    const idle = Date.now() - answeredAt;
    expect(idle).toBeGreaterThanOrEqual(300);
    expect(idle).toBeLessThan(400 + SLACK_MS);
  });

  it('a socket serves at most HTTP_MAX_REQUESTS_PER_SOCKET requests, the last one says Connection: close', async () => {
    const c = await connect();
    const answers: string[] = [];
    for (let i = 1; i <= 3; i++) {
      const before = c.received().length;
      c.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      await c.waitFor(new RegExp(`(HTTP/1\\.1 200[^]*?\\{[^}]*\\}\\}){${i}}`));
      answers.push(c.received().slice(before));
    }
    expect(answers[0]).toMatch(/connection: keep-alive/i);
    expect(answers[2]).toMatch(/connection: close/i);
    await c.closed;
  });

  it('connections beyond HTTP_MAX_CONNECTIONS are dropped at accept; the others keep working', async () => {
    // Held open by sending a request line without finishing it (they would otherwise time out while we count).
    const held = await Promise.all(Array.from({ length: 16 }, () => connect()));
    for (const c of held) c.write('GET /health HTTP/1.1\r\n');
    await new Promise((r) => setTimeout(r, 200));
    const alive = held.filter((c) => !c.socket.destroyed);
    expect(alive.length).toBeLessThanOrEqual(12);
    expect(held.length - alive.length).toBeGreaterThanOrEqual(4);
    for (const c of alive) c.write('Host: x\r\n\r\n');
    const answers = await Promise.all(alive.map((c) => c.waitFor(/\r\n\r\n\{.*\}$/s)));
    for (const text of answers) expect(text).toMatch(/^HTTP\/1\.1 200 /);
  });
});
