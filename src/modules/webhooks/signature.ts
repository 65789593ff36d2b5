// Signing of webhook deliveries (contract §5).
//
// Every delivery carries two independent signature schemes computed from the same secret, so a
// receiver can verify with whichever library it already has:
//
//  * `X-Service-Signature: t=<ts>,v1=<hex>` — Stripe's scheme. HMAC-SHA256 over "<t>.<body>",
//    keyed with the WHOLE secret string ("whsec_…") as UTF-8 bytes. This is exactly what
//    `stripe.webhooks.constructEvent(body, header, secret)` computes (its Node crypto provider
//    calls createHmac('sha256', secret) with the string as given), so Stripe's verifier works.
//  * `webhook-id` / `webhook-timestamp` / `webhook-signature: v1,<base64>` — Standard Webhooks.
//    HMAC-SHA256 over "<id>.<t>.<body>", keyed with the BASE64-DECODED bytes after "whsec_"
//    (what `new Webhook(secret)` from the `standardwebhooks` package does). That is why secrets
//    must be "whsec_" + base64: the same string is then a valid key for both verifiers.
//
// During a rotation the caller passes [current, previous]; each scheme lists one signature per
// secret, and both verifiers accept a header if ANY listed signature matches.

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** Stripe's verifier and ours allow five minutes of clock skew / transit by default. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A fresh signing secret: "whsec_" + base64 of 32 random bytes (256-bit HMAC key). */
export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(32).toString('base64');
}

export interface SignDeliveryInput {
  /** Current secret first, then the previous one while it is inside its 24 h rotation window. */
  secrets: string[];
  /** Event id ("evt_…"); it is the Standard Webhooks message id, stable across retries. */
  eventId: string;
  /** Unix seconds of this attempt: every attempt is signed afresh. */
  timestamp: number;
  /** The exact bytes (as a string) that will be sent as the request body. */
  body: string;
}

/** Signature headers for one delivery attempt. */
export function signDelivery({ secrets, eventId, timestamp, body }: SignDeliveryInput): Record<string, string> {
  if (secrets.length === 0) throw new Error('signDelivery needs at least one secret');
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new RangeError(`timestamp must be unix seconds, got ${timestamp}`);
  }
  // Standard Webhooks verifiers treat an empty webhook-id header as missing and reject the delivery.
  if (eventId === '') throw new Error('signDelivery needs an event id');

  const serviceSignatures = secrets.map((secret) => `v1=${serviceSignature(secret, timestamp, body)}`);
  const standardSignatures = secrets.map((secret) => {
    const mac = createHmac('sha256', standardWebhooksKey(secret))
      .update(`${eventId}.${timestamp}.${body}`, 'utf8')
      .digest('base64');
    return `v1,${mac}`;
  });

  return {
    'X-Service-Signature': [`t=${timestamp}`, ...serviceSignatures].join(','),
    'webhook-id': eventId,
    'webhook-timestamp': String(timestamp),
    // Standard Webhooks separates multiple signatures with a space.
    'webhook-signature': standardSignatures.join(' '),
  };
}

export interface VerifyServiceSignatureOptions {
  /** Maximum age (and future skew) of `t`, in seconds. Default 300. */
  toleranceSeconds?: number;
  /** Unix seconds to verify against; defaults to the current time. */
  now?: number;
}

/**
 * Receiver-side check of `X-Service-Signature` (used by our docs, tests and the CLI). Accepts the
 * header when any v1 matches. Unlike Stripe's verifier it also refuses a `t` too far in the
 * FUTURE: a signer with a fast clock should not mint headers that stay valid for longer.
 */
export function verifyServiceSignature(
  body: string,
  header: string,
  secret: string,
  opts: VerifyServiceSignatureOptions = {},
): boolean {
  const parsed = parseServiceHeader(header);
  if (parsed === null || secret === '') return false;

  const tolerance = opts.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - parsed.timestamp) > tolerance) return false;

  const expected = Buffer.from(serviceSignature(secret, parsed.timestamp, body), 'utf8');
  let matched = false;
  // Compare against every candidate (no early exit) so timing does not reveal which one matched.
  for (const candidate of parsed.signatures) {
    const given = Buffer.from(candidate, 'utf8');
    if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true;
  }
  return matched;
}

function serviceSignature(secret: string, timestamp: number, body: string): string {
  // Key is the secret string itself (UTF-8), as Stripe does, not the decoded base64.
  return createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex');
}

/** The Standard Webhooks key: base64 after the optional "whsec_" prefix, decoded to bytes. */
function standardWebhooksKey(secret: string): Buffer {
  const encoded = secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : secret;
  // Buffer's base64 decoder silently skips junk; the reference library throws instead, so refuse
  // a secret it could not use rather than sign with a key no receiver can reproduce.
  if (encoded === '' || !BASE64.test(encoded)) {
    throw new Error('webhook secret must be "whsec_" followed by base64');
  }
  return Buffer.from(encoded, 'base64');
}

function parseServiceHeader(header: string): { timestamp: number; signatures: string[] } | null {
  let timestamp: number | null = null;
  const signatures: string[] = [];
  for (const item of header.split(',')) {
    const eq = item.indexOf('=');
    if (eq < 0) continue;
    const key = item.slice(0, eq).trim();
    const value = item.slice(eq + 1).trim();
    if (key === 't') {
      // Two different timestamps would make it ambiguous which one was signed.
      if (!/^\d{1,12}$/.test(value) || timestamp !== null) return null;
      timestamp = Number(value);
    } else if (key === 'v1') {
      signatures.push(value);
    }
    // Other schemes (v0, future versions) are ignored, as in Stripe's parser.
  }
  if (timestamp === null || signatures.length === 0) return null;
  return { timestamp, signatures };
}
