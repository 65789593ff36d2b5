import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyWebhook, WebhookVerificationError } from '../src/index.js';

const SECRET = 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTMyYg==';
const OLD_SECRET = 'whsec_b2xkLXNlY3JldC1vbGQtc2VjcmV0LW9sZC0zMmJ5dGU=';
const NOW = 1_795_000_000;
const body = JSON.stringify({ id: 'evt_1', type: 'lead.created', createdAt: '2026-11-21T10:00:00.000Z', organization: 'o', data: { object: 'lead', id: 'l', description: 'Lead created', changes: { before: {}, after: { name: 'Ada' } }, actor: { type: 'API_KEY', id: 'k', channel: 'API' } } });

const v1 = (secret: string, t: number, payload = body) => createHmac('sha256', secret).update(`${t}.${payload}`).digest('hex');
const header = (t: number, ...secrets: string[]) => ({ 'x-service-signature': [`t=${t}`, ...secrets.map((s) => `v1=${v1(s, t)}`)].join(',') });

async function reason(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(WebhookVerificationError);
  return (error as WebhookVerificationError).reason;
}

describe('verifyWebhook', () => {
  it('returns the parsed event for a valid signature, from a string or bytes, with Node or fetch headers', async () => {
    const event = await verifyWebhook(body, header(NOW, SECRET), SECRET, { now: NOW });
    expect(event).toMatchObject({ id: 'evt_1', type: 'lead.created', data: { actor: { channel: 'API' } } });
    await expect(verifyWebhook(new TextEncoder().encode(body), new Headers(header(NOW, SECRET)), SECRET, { now: new Date(NOW * 1000) })).resolves.toEqual(event);
    await expect(verifyWebhook(body, { 'X-Service-Signature': header(NOW, SECRET)['x-service-signature'] }, SECRET, { now: NOW })).resolves.toEqual(event);
  });

  it('accepts any v1 during a rotation: the header lists new and old, the receiver knows either one', async () => {
    const rotating = header(NOW, SECRET, OLD_SECRET);
    await expect(verifyWebhook(body, rotating, SECRET, { now: NOW })).resolves.toMatchObject({ id: 'evt_1' });
    await expect(verifyWebhook(body, rotating, OLD_SECRET, { now: NOW })).resolves.toMatchObject({ id: 'evt_1' });
    await expect(verifyWebhook(body, header(NOW, OLD_SECRET), [SECRET, OLD_SECRET], { now: NOW })).resolves.toMatchObject({ id: 'evt_1' });
  });

  it('rejects a wrong secret, a tampered body and a header without the signature', async () => {
    expect(await reason(verifyWebhook(body, header(NOW, SECRET), OLD_SECRET, { now: NOW }))).toBe('signature_mismatch');
    expect(await reason(verifyWebhook(body.replace('Ada', 'Eve'), header(NOW, SECRET), SECRET, { now: NOW }))).toBe('signature_mismatch');
    expect(await reason(verifyWebhook(body, {}, SECRET, { now: NOW }))).toBe('missing_signature');
    expect(await reason(verifyWebhook(body, { 'x-service-signature': `v1=${v1(SECRET, NOW)}` }, SECRET, { now: NOW }))).toBe('malformed_signature');
    expect(await reason(verifyWebhook(body, { 'x-service-signature': `t=${NOW},t=${NOW},v1=${v1(SECRET, NOW)}` }, SECRET, { now: NOW }))).toBe('malformed_signature');
    expect(await reason(verifyWebhook(body, { 'x-service-signature': `t=${NOW},v1=zz` }, SECRET, { now: NOW }))).toBe('signature_mismatch');
  });

  it('rejects a stale and a future timestamp outside the tolerance, accepts the edges', async () => {
    expect(await reason(verifyWebhook(body, header(NOW - 301, SECRET), SECRET, { now: NOW }))).toBe('timestamp_out_of_tolerance');
    expect(await reason(verifyWebhook(body, header(NOW + 301, SECRET), SECRET, { now: NOW }))).toBe('timestamp_out_of_tolerance');
    await expect(verifyWebhook(body, header(NOW - 300, SECRET), SECRET, { now: NOW })).resolves.toBeTruthy();
    await expect(verifyWebhook(body, header(NOW + 300, SECRET), SECRET, { now: NOW })).resolves.toBeTruthy();
    expect(await reason(verifyWebhook(body, header(NOW - 31, SECRET), SECRET, { now: NOW, toleranceSeconds: 30 }))).toBe('timestamp_out_of_tolerance');
  });

  it('refuses a signed body that is not JSON', async () => {
    const t = NOW;
    const headers = { 'x-service-signature': `t=${t},v1=${v1(SECRET, t, 'not json')}` };
    expect(await reason(verifyWebhook('not json', headers, SECRET, { now: NOW }))).toBe('invalid_payload');
  });
});
