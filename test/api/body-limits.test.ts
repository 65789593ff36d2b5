import { describe, expect, it } from 'vitest';
import type { RawClient } from '../helpers/raw-socket.js';
import { useRawServer } from '../helpers/raw-server.js';
import { DRAIN_LIMIT_FACTOR } from '../../src/http/body-limits.js';
import { BATCH_BODY_LIMIT_FACTOR } from '../../src/modules/shared/batch.routes.js';

/**
 * Bodies over the limit, on a real listening server with raw sockets. The limit is large enough that an
 * over-limit body outgrows what the loopback's socket buffers hold, so a server that closes while the client
 * is still writing resets the connection (and the client loses the answer) instead of hiding it in a buffer.
 */
const LIMIT = 4 * 1024 * 1024;
const BATCH_LIMIT = BATCH_BODY_LIMIT_FACTOR * LIMIT;
const REQUEST_TIMEOUT_MS = 3_000;
/** Node checks the request timeout on a timer; scheduling on a busy CI box adds more. */
const SLACK_MS = 2_000;

const server = useRawServer({ BODY_LIMIT_BYTES: String(LIMIT), HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS), HTTP_HEADERS_TIMEOUT_MS: '2000' });
const connect = server.connect;

/** A JSON body of exactly `size` bytes: the value, then spaces (valid JSON, so only its size can refuse it). */
const padded = (value: unknown, size: number) => {
  const json = JSON.stringify(value);
  return json + ' '.repeat(size - json.length);
};

const head = (path: string, headers: Record<string, string | number>) =>
  `POST /api/public/v1${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.key}\r\nContent-Type: application/json\r\n` +
  Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('') +
  '\r\n';

/**
 * Writes the whole request before reading anything, as a simple client does, then reads what came back.
 * Resolves with the write's outcome (an EPIPE or ECONNRESET when the server reset the connection mid-body).
 */
async function writeAllThenRead(c: RawClient, data: string): Promise<Error | undefined> {
  c.socket.pause();
  const outcome = await new Promise<Error | undefined>((resolve) => c.socket.write(data, (err) => resolve(err ?? undefined)));
  c.socket.resume();
  return outcome;
}

/** The first answer in `text`: its status, head and JSON body. */
const answerOf = (text: string) => {
  const end = text.indexOf('\r\n\r\n');
  const body = text.slice(end + 4).split(/(?=HTTP\/1\.1 \d{3} )/)[0]!;
  return { status: Number(text.slice(9, 12)), head: text.slice(0, end), body: body ? (JSON.parse(body) as Record<string, unknown>) : undefined };
};

/** Resolves with the response once its JSON body is complete. */
const response = (c: RawClient) => c.waitFor(/\r\n\r\n\{.*\}$/s, 10_000);

describe('a declared Content-Length over the limit', () => {
  it('is refused with 413 in the envelope before any of it is read, naming the limit and the batch routes\' larger one', async () => {
    const c = await connect();
    c.write(head('/leads', { 'Content-Length': LIMIT + 1 }).replace(/Authorization: [^\r]*\r\n/, ''));
    const answer = answerOf(await response(c));
    expect(answer.status).toBe(413);
    expect(answer.head).toMatch(/\r\nconnection: close/i);
    expect(answer.body).toMatchObject({ status: false, code: 'PAYLOAD_TOO_LARGE', requestId: expect.any(String) });
    expect(answer.body!.message).toContain(`${LIMIT} bytes`);
    expect(answer.body!.message).toContain(`${BATCH_LIMIT} bytes`);
  });

  it('a client that writes the whole body before reading still reads the 413: the body is drained, not reset', async () => {
    const c = await connect();
    const body = padded({ name: 'Too big' }, 3 * LIMIT);
    const outcome = await writeAllThenRead(c, head('/leads', { 'Content-Length': body.length }) + body);
    expect(outcome).toBeUndefined();
    const answer = answerOf(await response(c));
    expect(answer.status).toBe(413);
    expect(answer.body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    await c.closed;
  });

  it('the drain is bounded in bytes: a client still sending far past the limit is cut off', async () => {
    const c = await connect({ allowHalfOpen: true });
    c.write(head('/leads', { 'Content-Length': 100 * LIMIT }));
    const chunk = 'x'.repeat(256 * 1024);
    let sent = 0;
    while (!c.socket.destroyed && sent < 100 * LIMIT) {
      if (!c.write(chunk)) await new Promise((r) => c.socket.once('drain', r).once('close', r));
      sent += chunk.length;
    }
    await c.closed;
    expect(answerOf(c.received()).status).toBe(413);
    // What the server read after its answer, plus what the sockets' buffers held when it stopped: far from all.
    expect(sent).toBeGreaterThan(DRAIN_LIMIT_FACTOR * LIMIT);
    expect(sent).toBeLessThan(25 * LIMIT);
  });

  it('the drain is bounded in time: a client trickling the rest is closed at HTTP_REQUEST_TIMEOUT_MS', async () => {
    const c = await connect({ allowHalfOpen: true });
    c.write(head('/leads', { 'Content-Length': 2 * LIMIT }));
    await response(c);
    const answeredAt = Date.now();
    const timer = setInterval(() => c.write('x'), 50);
    await c.closed;
    clearInterval(timer);
    const drainedFor = Date.now() - answeredAt;
    expect(drainedFor).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 100);
    expect(drainedFor).toBeLessThan(REQUEST_TIMEOUT_MS + SLACK_MS);
    expect(answerOf(c.received()).status).toBe(413);
  });
});

describe('Expect: 100-continue', () => {
  it('over the limit: 413 instead of 100 Continue', async () => {
    const c = await connect();
    c.write(head('/leads', { 'Content-Length': LIMIT + 1, Expect: '100-continue' }));
    const text = await response(c);
    expect(text).not.toMatch(/100 Continue/);
    const answer = answerOf(text);
    expect(answer.status).toBe(413);
    expect(answer.head).toMatch(/\r\nconnection: close/i);
    expect(answer.body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    await c.closed;
  });

  it('within the limit: 100 Continue, then the body, then the answer, on a connection kept alive', async () => {
    const c = await connect();
    const body = JSON.stringify({ name: 'Asked first' });
    c.write(head('/leads', { 'Content-Length': body.length, Expect: '100-continue' }));
    await c.waitFor(/^HTTP\/1\.1 100 Continue\r\n\r\n$/);
    c.write(body);
    const answer = answerOf((await response(c)).slice('HTTP/1.1 100 Continue\r\n\r\n'.length));
    expect(answer.status).toBe(201);
    expect(answer.head).toMatch(/\r\nconnection: keep-alive/i);
  });

  it('a batch within the batch limit (above the single one) gets 100 Continue too', async () => {
    const c = await connect();
    const body = padded({ items: [{ name: 'Batched' }] }, LIMIT + 1);
    c.write(head('/leads/batch', { 'Content-Length': body.length, Expect: '100-continue' }));
    await c.waitFor(/^HTTP\/1\.1 100 Continue\r\n\r\n$/);
    c.write(body);
    expect(answerOf((await response(c)).slice('HTTP/1.1 100 Continue\r\n\r\n'.length)).status).toBe(200);
  });

  it('refused for another reason before the body is read (no key): the final answer, no 100, and the connection closes', async () => {
    const c = await connect();
    c.write(head('/leads', { 'Content-Length': 100, Expect: '100-continue' }).replace(/Bearer [^\r]*/, 'Bearer nope'));
    const text = await response(c);
    expect(text).not.toMatch(/100 Continue/);
    expect(answerOf(text).status).toBe(401);
    expect(answerOf(text).head).toMatch(/\r\nconnection: close/i);
    await c.closed;
  });
});

describe('a chunked body (no Content-Length)', () => {
  it('over the limit: 413, readable by a client that writes it all before reading', async () => {
    const c = await connect();
    const chunk = 'x'.repeat(256 * 1024);
    const chunks = Array.from({ length: (3 * LIMIT) / chunk.length }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`).join('');
    const outcome = await writeAllThenRead(c, head('/leads', { 'Transfer-Encoding': 'chunked' }) + chunks + '0\r\n\r\n');
    expect(outcome).toBeUndefined();
    const answer = answerOf(await response(c));
    expect(answer.status).toBe(413);
    expect(answer.head).toMatch(/\r\nconnection: close/i);
    expect(answer.body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect(answer.body!.message).toContain(`${LIMIT} bytes`);
    // Refused while being read, after the key was checked: the rate limit headers come with it.
    expect(answer.head).toMatch(/\r\nx-ratelimit-limit: \d+/i);
  });
});

describe('within the limits', () => {
  it('a body just under the limit is accepted, and the connection serves the next request', async () => {
    const c = await connect();
    const body = padded({ name: 'Just fits' }, LIMIT);
    c.write(head('/leads', { 'Content-Length': body.length }) + body);
    expect(answerOf(await response(c)).status).toBe(201);
    c.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    await c.waitFor(/\}HTTP\/1\.1 200 [^]*\r\n\r\n\{.*\}$/s);
  });

  it('a batch above the single limit but within the batch limit is accepted', async () => {
    const c = await connect();
    const body = padded({ items: [{ name: 'Batched' }] }, 2 * LIMIT);
    c.write(head('/leads/batch', { 'Content-Length': body.length }) + body);
    const answer = answerOf(await response(c));
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ status: true, data: { results: [{ status: 201 }] } });
  });

  it('a batch over the batch limit is refused with 413 naming the batch limit', async () => {
    const c = await connect();
    c.write(head('/leads/batch', { 'Content-Length': BATCH_LIMIT + 1 }));
    const answer = answerOf(await response(c));
    expect(answer.status).toBe(413);
    expect(answer.body!.message).toContain(`${BATCH_LIMIT} bytes`);
    // Answered before the key was checked, though it was sent: no rate limit headers (the OpenAPI 413 says so).
    expect(answer.head).not.toMatch(/\r\n(x-)?ratelimit/i);
  });
});
