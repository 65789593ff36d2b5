import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { verifyWebhook, WebhookVerificationError } from '@crm/sdk';
import { generateWebhookSecret, signDelivery } from '../../src/modules/webhooks/signature.js';

/** The SDK's verifier (written independently, WebCrypto) against the server's signer (node:crypto). */
describe("SDK verifyWebhook against the server's signDelivery", () => {
  const event = { id: 'evt_0123456789abcdef01234567', type: 'lead.created', createdAt: '2026-11-21T10:00:00.000Z', organization: 'org', data: { object: 'lead', id: 'l1', description: 'Lead created', changes: { before: {}, after: { name: 'Zoë «Ada» 李' } }, actor: { type: 'API_KEY', id: 'k1', channel: 'MCP' } } };
  const body = JSON.stringify(event);
  const now = 1_795_000_000;

  it('accepts what the server signs, with Node-style headers, and returns the typed event', async () => {
    const secret = generateWebhookSecret();
    const headers = signDelivery({ secrets: [secret], eventId: event.id, timestamp: now, body });
    const verified = await verifyWebhook(Buffer.from(body, 'utf8'), headers, secret, { now });
    expect(verified).toEqual(event);
    expect(verified.data.actor.channel).toBe('MCP');
  });

  it('accepts both secrets of a server-side rotation (t=…,v1=<new>,v1=<old>) and refuses an unrelated one', async () => {
    const [current, previous, stranger] = [generateWebhookSecret(), generateWebhookSecret(), generateWebhookSecret()];
    const headers = signDelivery({ secrets: [current, previous], eventId: event.id, timestamp: now, body });
    expect(headers['X-Service-Signature']!.match(/v1=/g)).toHaveLength(2);
    await expect(verifyWebhook(body, headers, current, { now })).resolves.toEqual(event);
    await expect(verifyWebhook(body, headers, previous, { now })).resolves.toEqual(event);
    const refused = await verifyWebhook(body, headers, stranger, { now }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(WebhookVerificationError);
    expect((refused as WebhookVerificationError).reason).toBe('signature_mismatch');
  });

  it('agrees with the signer on any body and timestamp, and rejects any one-character change', async () => {
    const secret = generateWebhookSecret();
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'grapheme', maxLength: 200 }), fc.integer({ min: 0, max: 99_999_999_999 }), async (text, t) => {
        const payload = JSON.stringify({ text });
        const headers = signDelivery({ secrets: [secret], eventId: 'evt_x', timestamp: t, body: payload });
        await expect(verifyWebhook(payload, headers, secret, { now: t })).resolves.toEqual({ text });
        const tampered = JSON.stringify({ text: `${text}!` });
        await expect(verifyWebhook(tampered, headers, secret, { now: t })).rejects.toThrow(WebhookVerificationError);
      }),
      { numRuns: 60 },
    );
  });
});
