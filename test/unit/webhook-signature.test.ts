import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import {
  generateWebhookSecret,
  signDelivery,
  verifyServiceSignature,
} from '../../src/modules/webhooks/signature.js';

// The receivers' libraries are the judges: whatever we sign must pass their verifiers unchanged.
const stripe = new Stripe('sk_test_x');

const nowSeconds = () => Math.floor(Date.now() / 1000);

const eventBody = JSON.stringify({
  id: 'evt_0123456789abcdef',
  type: 'lead.created',
  createdAt: '2025-03-01T12:00:00.000Z',
  organization: 'org_1',
  data: { object: 'lead', id: 'lead_1', description: 'Ada Lovelace — Ünïcødé ✓', changes: { before: {}, after: {} } },
});

function stripeAccepts(body: string, headers: Record<string, string>, secret: string): boolean {
  try {
    stripe.webhooks.constructEvent(body, headers['X-Service-Signature']!, secret);
    return true;
  } catch {
    return false;
  }
}

function standardAccepts(body: string, headers: Record<string, string>, secret: string): boolean {
  try {
    // jsonParse:false so arbitrary (non-JSON) bodies are judged on the signature alone.
    new Webhook(secret).verify(body, headers, { jsonParse: false });
    return true;
  } catch {
    return false;
  }
}

function oursAccepts(body: string, headers: Record<string, string>, secret: string): boolean {
  return verifyServiceSignature(body, headers['X-Service-Signature']!, secret, {});
}

describe('generateWebhookSecret', () => {
  it('is whsec_ + base64 of 32 random bytes', () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(generateWebhookSecret()).not.toBe(secret);
  });

  it('is accepted as a key by the standardwebhooks library', () => {
    expect(() => new Webhook(generateWebhookSecret())).not.toThrow();
  });
});

describe('signDelivery', () => {
  it('produces the four headers in the documented shapes', () => {
    const headers = signDelivery({ secrets: [generateWebhookSecret()], eventId: 'evt_1', timestamp: 1_700_000_000, body: '{}' });
    expect(Object.keys(headers).sort()).toEqual(['X-Service-Signature', 'webhook-id', 'webhook-signature', 'webhook-timestamp']);
    expect(headers['X-Service-Signature']).toMatch(/^t=1700000000,v1=[0-9a-f]{64}$/);
    expect(headers['webhook-id']).toBe('evt_1');
    expect(headers['webhook-timestamp']).toBe('1700000000');
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
  });

  it('is accepted by Stripe constructEvent, Standard Webhooks verify and our verifier', () => {
    const secret = generateWebhookSecret();
    const headers = signDelivery({ secrets: [secret], eventId: 'evt_0123456789abcdef', timestamp: nowSeconds(), body: eventBody });
    expect(stripe.webhooks.constructEvent(eventBody, headers['X-Service-Signature']!, secret).id).toBe('evt_0123456789abcdef');
    expect(Stripe.webhooks.constructEvent(eventBody, headers['X-Service-Signature']!, secret).id).toBe('evt_0123456789abcdef');
    expect(new Webhook(secret).verify(eventBody, headers)).toMatchObject({ type: 'lead.created' });
    expect(oursAccepts(eventBody, headers, secret)).toBe(true);
  });

  it('matches byte for byte what each library would sign itself', () => {
    const secret = generateWebhookSecret();
    const timestamp = 1_700_000_123;
    const headers = signDelivery({ secrets: [secret], eventId: 'evt_x', timestamp, body: eventBody });
    expect(headers['X-Service-Signature']).toBe(
      stripe.webhooks.generateTestHeaderString({ payload: eventBody, secret, timestamp }),
    );
    expect(headers['webhook-signature']).toBe(new Webhook(secret).sign('evt_x', new Date(timestamp * 1000), eventBody));
  });

  describe('during a secret rotation', () => {
    const oldSecret = generateWebhookSecret();
    const newSecret = generateWebhookSecret();
    const headers = signDelivery({ secrets: [newSecret, oldSecret], eventId: 'evt_rot', timestamp: nowSeconds(), body: eventBody });

    it('lists one signature per secret, current first', () => {
      expect(headers['X-Service-Signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
      expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
      const single = signDelivery({ secrets: [newSecret], eventId: 'evt_rot', timestamp: Number(headers['webhook-timestamp']), body: eventBody });
      expect(headers['X-Service-Signature']!.startsWith(single['X-Service-Signature']!)).toBe(true);
    });

    it('is accepted by a receiver still holding only the OLD secret', () => {
      expect(stripeAccepts(eventBody, headers, oldSecret)).toBe(true);
      expect(standardAccepts(eventBody, headers, oldSecret)).toBe(true);
      expect(oursAccepts(eventBody, headers, oldSecret)).toBe(true);
    });

    it('is accepted by a receiver already holding only the NEW secret', () => {
      expect(stripeAccepts(eventBody, headers, newSecret)).toBe(true);
      expect(standardAccepts(eventBody, headers, newSecret)).toBe(true);
      expect(oursAccepts(eventBody, headers, newSecret)).toBe(true);
    });
  });

  it('refuses to sign without a secret, with a non-base64 secret or a bad timestamp', () => {
    const base = { eventId: 'evt_1', timestamp: 1_700_000_000, body: '{}' };
    expect(() => signDelivery({ ...base, secrets: [] })).toThrow();
    expect(() => signDelivery({ ...base, secrets: ['whsec_not base64!'] })).toThrow(/base64/);
    expect(() => signDelivery({ ...base, secrets: ['whsec_'] })).toThrow(/base64/);
    expect(() => signDelivery({ ...base, secrets: [generateWebhookSecret()], timestamp: 1.5 })).toThrow(RangeError);
    expect(() => signDelivery({ ...base, secrets: [generateWebhookSecret()], eventId: '' })).toThrow();
  });
});

describe('rejections', () => {
  const secret = generateWebhookSecret();

  it('rejects a tampered body in all three verifiers', () => {
    const headers = signDelivery({ secrets: [secret], eventId: 'evt_t', timestamp: nowSeconds(), body: eventBody });
    const tampered = eventBody.replace('lead.created', 'lead.updated');
    expect(stripeAccepts(tampered, headers, secret)).toBe(false);
    expect(standardAccepts(tampered, headers, secret)).toBe(false);
    expect(oursAccepts(tampered, headers, secret)).toBe(false);
  });

  it('rejects the wrong secret in all three verifiers', () => {
    const headers = signDelivery({ secrets: [secret], eventId: 'evt_w', timestamp: nowSeconds(), body: eventBody });
    const other = generateWebhookSecret();
    expect(stripeAccepts(eventBody, headers, other)).toBe(false);
    expect(standardAccepts(eventBody, headers, other)).toBe(false);
    expect(oursAccepts(eventBody, headers, other)).toBe(false);
  });

  it('rejects a stale timestamp (older than 5 minutes) in all three verifiers', () => {
    const headers = signDelivery({ secrets: [secret], eventId: 'evt_s', timestamp: nowSeconds() - 600, body: eventBody });
    expect(stripeAccepts(eventBody, headers, secret)).toBe(false);
    expect(standardAccepts(eventBody, headers, secret)).toBe(false);
    expect(oursAccepts(eventBody, headers, secret)).toBe(false);
  });

  it('rejects a timestamp too far in the future (Standard Webhooks and ours; Stripe only checks age)', () => {
    const headers = signDelivery({ secrets: [secret], eventId: 'evt_f', timestamp: nowSeconds() + 600, body: eventBody });
    expect(standardAccepts(eventBody, headers, secret)).toBe(false);
    expect(oursAccepts(eventBody, headers, secret)).toBe(false);
  });
});

describe('verifyServiceSignature', () => {
  const secret = generateWebhookSecret();
  const t = 1_700_000_000;
  const header = signDelivery({ secrets: [secret], eventId: 'evt_v', timestamp: t, body: 'x' })['X-Service-Signature']!;
  const v1 = header.split(',')[1]!;

  it('honours an injected clock and tolerance at the boundary', () => {
    expect(verifyServiceSignature('x', header, secret, { now: t + 300 })).toBe(true);
    expect(verifyServiceSignature('x', header, secret, { now: t + 301 })).toBe(false);
    expect(verifyServiceSignature('x', header, secret, { now: t - 300 })).toBe(true);
    expect(verifyServiceSignature('x', header, secret, { now: t - 301 })).toBe(false);
    expect(verifyServiceSignature('x', header, secret, { now: t + 3600, toleranceSeconds: 3600 })).toBe(true);
  });

  it('accepts any matching v1 among several and ignores other schemes', () => {
    const now = t;
    expect(verifyServiceSignature('x', `t=${t},v1=${'0'.repeat(64)},${v1}`, secret, { now })).toBe(true);
    expect(verifyServiceSignature('x', `t=${t},v0=abc,${v1}`, secret, { now })).toBe(true);
  });

  it('rejects malformed headers', () => {
    const now = t;
    for (const bad of ['', 'garbage', v1, `t=${t}`, `t=abc,${v1}`, `t=${t},t=${t + 1},${v1}`, `t=${t},v1=`, `t=${t},v1=${'f'.repeat(64)}`, `t=${t},v1=ab`]) {
      expect(verifyServiceSignature('x', bad, secret, { now })).toBe(false);
    }
    expect(verifyServiceSignature('x', header, '', { now })).toBe(false);
  });
});

describe('properties', () => {
  // Full-range code points (astral planes included), as a receiver may get any UTF-8 body.
  const unicodeText = fc.string({ unit: 'binary', minLength: 1, maxLength: 300 });

  it('any unicode body round-trips through all three verifiers, including during rotation', () => {
    const secrets = [generateWebhookSecret(), generateWebhookSecret()];
    fc.assert(
      fc.property(unicodeText, fc.boolean(), (body, rotating) => {
        const signing = rotating ? secrets : [secrets[0]!];
        const headers = signDelivery({ secrets: signing, eventId: 'evt_prop', timestamp: nowSeconds(), body });
        for (const secret of signing) {
          // Raw non-JSON body: use Stripe's header verifier, which does not parse the payload.
          expect(stripe.webhooks.signature!.verifyHeader(body, headers['X-Service-Signature']!, secret)).toBe(true);
          expect(standardAccepts(body, headers, secret)).toBe(true);
          expect(oursAccepts(body, headers, secret)).toBe(true);
        }
      }),
    );
  });

  it('any unicode text inside a JSON event passes Stripe constructEvent', () => {
    const secret = generateWebhookSecret();
    fc.assert(
      fc.property(unicodeText, (text) => {
        const body = JSON.stringify({ id: 'evt_p', type: 'lead.updated', data: { description: text } });
        const headers = signDelivery({ secrets: [secret], eventId: 'evt_p', timestamp: nowSeconds(), body });
        expect(stripe.webhooks.constructEvent(body, headers['X-Service-Signature']!, secret).id).toBe('evt_p');
        expect(new Webhook(secret).verify(body, headers)).toMatchObject({ id: 'evt_p' });
      }),
    );
  });

  it('changing any body fails verification', () => {
    const secret = generateWebhookSecret();
    fc.assert(
      fc.property(unicodeText, unicodeText, (body, other) => {
        fc.pre(body !== other);
        const headers = signDelivery({ secrets: [secret], eventId: 'evt_n', timestamp: nowSeconds(), body });
        expect(oursAccepts(other, headers, secret)).toBe(false);
        expect(standardAccepts(other, headers, secret)).toBe(false);
      }),
    );
  });
});
