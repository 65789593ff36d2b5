// Receiver-side verification of `X-Service-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>…]`, where each v1 is
// HMAC-SHA256 keyed with the whole secret string ("whsec_…" as UTF-8) over "<t>.<raw body>". WebCrypto only,
// so it runs unchanged on Node 20+, Deno, Bun, Cloudflare Workers and in browsers.
import type { WebhookEvent } from './webhook-event.js';

export const SIGNATURE_HEADER = 'x-service-signature';
export const DEFAULT_TOLERANCE_SECONDS = 300;

export type WebhookVerificationReason = 'missing_signature' | 'malformed_signature' | 'signature_mismatch' | 'timestamp_out_of_tolerance' | 'invalid_payload';

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(readonly reason: WebhookVerificationReason, message: string) {
    super(message);
  }
}

/** A fetch `Headers`, or Node's `req.headers` (names lower-cased, values possibly arrays). */
export type HeadersLike = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** Largest accepted distance between `t` and now, either way (stale or future), in seconds. Default 300. */
  toleranceSeconds?: number;
  /** The instant to verify at: a Date, or unix seconds. Default: now. */
  now?: Date | number;
}

const encoder = new TextEncoder();

/**
 * Checks the signature and the timestamp of a delivery and returns its parsed event. `rawBody` must be the
 * exact bytes received (not re-serialized JSON). `secret` may list several secrets while you rotate yours;
 * the header itself carries one v1 per secret during a server-side rotation, and any match is accepted.
 * Throws WebhookVerificationError (with a `reason`) otherwise.
 */
export async function verifyWebhook(rawBody: string | Uint8Array, headers: HeadersLike, secret: string | readonly string[], opts: VerifyWebhookOptions = {}): Promise<WebhookEvent> {
  const header = readHeader(headers, SIGNATURE_HEADER);
  if (header === null) throw new WebhookVerificationError('missing_signature', `the ${SIGNATURE_HEADER} header is missing`);
  const parsed = parseSignatureHeader(header);
  if (parsed === null) throw new WebhookVerificationError('malformed_signature', `the ${SIGNATURE_HEADER} header is not t=<seconds>,v1=<hex>`);
  const secrets = (typeof secret === 'string' ? [secret] : [...secret]).filter((s) => s !== '');
  if (secrets.length === 0) throw new TypeError('verifyWebhook: a secret is required');

  const body = typeof rawBody === 'string' ? encoder.encode(rawBody) : rawBody;
  const signed = concat(encoder.encode(`${parsed.timestamp}.`), body);
  if (!(await anySignatureMatches(signed, parsed.signatures, secrets))) {
    throw new WebhookVerificationError('signature_mismatch', 'no v1 signature matches the secret');
  }

  const tolerance = opts.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const now = opts.now instanceof Date ? Math.floor(opts.now.getTime() / 1000) : opts.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - parsed.timestamp) > tolerance) {
    const direction = parsed.timestamp < now ? 'old' : 'far in the future';
    throw new WebhookVerificationError('timestamp_out_of_tolerance', `the signature timestamp is too ${direction} (tolerance ${tolerance} s)`);
  }

  try {
    return JSON.parse(new TextDecoder().decode(body)) as WebhookEvent;
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'the body is not JSON');
  }
}

/** subtle.verify compares in constant time; every candidate is checked, whatever matched first. */
async function anySignatureMatches(signed: Uint8Array<ArrayBuffer>, signatures: string[], secrets: string[]): Promise<boolean> {
  let matched = false;
  for (const secret of secrets) {
    const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
    for (const hex of signatures) {
      const mac = hexToBytes(hex);
      if (mac !== null && (await crypto.subtle.verify('HMAC', key, mac, signed))) matched = true;
    }
  }
  return matched;
}

function readHeader(headers: HeadersLike, name: string): string | null {
  if (typeof headers.get === 'function') return (headers as { get(n: string): string | null }).get(name);
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return value === undefined ? null : Array.isArray(value) ? value.join(',') : value;
}

/** `t` exactly once; every `v1` kept; other schemes (future versions) ignored. */
function parseSignatureHeader(header: string): { timestamp: number; signatures: string[] } | null {
  let timestamp: number | null = null;
  const signatures: string[] = [];
  for (const item of header.split(',')) {
    const eq = item.indexOf('=');
    if (eq < 0) continue;
    const key = item.slice(0, eq).trim();
    const value = item.slice(eq + 1).trim();
    if (key === 't') {
      if (timestamp !== null || !/^\d{1,12}$/.test(value)) return null;
      timestamp = Number(value);
    } else if (key === 'v1') {
      signatures.push(value);
    }
  }
  return timestamp === null || signatures.length === 0 ? null : { timestamp, signatures };
}

function hexToBytes(hex: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[0-9a-f]{64}$/i.test(hex)) return null;
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 32; i += 1) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
