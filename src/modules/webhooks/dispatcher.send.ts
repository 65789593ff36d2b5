// One HTTP attempt of a delivery: sign, POST, read a bounded answer, classify the result.

import { request, type Dispatcher } from 'undici';
import type { AttemptResult } from './dispatcher.outcome.js';
import { signDelivery } from './signature.js';

/** Bytes of the answer read at most: enough to reuse the connection for normal answers, bounded for hostile ones. */
export const RESPONSE_READ_CAP = 64 * 1024;
/** Bytes of the answer kept in the delivery log. */
export const EXCERPT_BYTES = 1024;
export const USER_AGENT = 'crm-webhooks/1.0';

export interface OutgoingDelivery {
  deliveryId: string;
  eventId: string;
  eventType: string;
  url: string;
  /** The stored event payload: these exact bytes are signed and sent. */
  body: string;
  secrets: string[];
}

export interface SendOptions {
  /** Whole exchange: connect, send, answer headers and body. */
  timeoutMs: number;
  /** Unix seconds for the signatures of this attempt. */
  timestamp: number;
  startedAt: Date;
}

/** Never throws: every failure becomes an AttemptResult with an error safe to show to the endpoint's owner. */
export async function sendAttempt(agent: Dispatcher, delivery: OutgoingDelivery, opts: SendOptions): Promise<AttemptResult> {
  const started = performance.now();
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, opts.timeoutMs);
  let responseStatus: number | null = null;
  let retryAfter: string | undefined;
  let excerpt: string | null = null;
  let error: string | null = null;
  try {
    const response = await request(delivery.url, {
      method: 'POST',
      dispatcher: agent,
      signal: controller.signal,
      headers: {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'x-service-event': delivery.eventType,
        'x-service-delivery': delivery.deliveryId,
        ...signDelivery({ secrets: delivery.secrets, eventId: delivery.eventId, timestamp: opts.timestamp, body: delivery.body }),
      },
      body: delivery.body,
    });
    responseStatus = response.statusCode;
    const header = response.headers['retry-after'];
    retryAfter = Array.isArray(header) ? header[0] : header;
    excerpt = await readExcerpt(response.body);
    // undici's request() never follows redirects unless asked to; a 3xx is reported as the failure it is.
    if (responseStatus >= 300 && responseStatus < 400) error = `Redirects are not followed (HTTP ${responseStatus})`;
  } catch (err) {
    error = timedOut ? `Timed out after ${opts.timeoutMs} ms` : describeError(err);
  } finally {
    clearTimeout(timer);
  }
  return {
    startedAt: opts.startedAt,
    durationMs: Math.round(performance.now() - started),
    responseStatus,
    responseExcerpt: excerpt,
    error,
    succeeded: error === null && responseStatus !== null && responseStatus >= 200 && responseStatus < 300,
    retryAfter,
  };
}

/** Reads at most RESPONSE_READ_CAP bytes and returns the first EXCERPT_BYTES as text. */
async function readExcerpt(body: Dispatcher.ResponseData['body']): Promise<string | null> {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let total = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (keptBytes < EXCERPT_BYTES) {
      kept.push(chunk);
      keptBytes += chunk.length;
    }
    total += chunk.length;
    if (total >= RESPONSE_READ_CAP) break; // leaving the loop destroys the stream and its connection
  }
  if (total === 0) return null;
  // stream: true holds back a multi-byte character cut at the limit instead of emitting U+FFFD; NUL is
  // dropped because PostgreSQL text cannot store it.
  const text = new TextDecoder('utf-8').decode(Buffer.concat(kept).subarray(0, EXCERPT_BYTES), { stream: true });
  return text.replace(/\u0000/g, '');
}

const ERROR_TEXT: Record<string, string> = {
  ECONNREFUSED: 'Connection refused',
  ECONNRESET: 'Connection reset by the endpoint',
  EPIPE: 'Connection reset by the endpoint',
  UND_ERR_SOCKET: 'Connection reset by the endpoint',
  UND_ERR_CONNECT_TIMEOUT: 'Connection timed out',
  ENOTFOUND: 'Host name could not be resolved',
  EAI_AGAIN: 'Host name could not be resolved',
  EHOSTUNREACH: 'Host unreachable',
  ENETUNREACH: 'Network unreachable',
};

/** A short, stable reason; never a stack, never a resolved internal address (the SSRF guard words its own). */
function describeError(err: unknown): string {
  const e = err as { code?: string; message?: string; name?: string; cause?: { code?: string } } | null;
  if (e?.code === 'ESSRF') return e.message ?? 'Refused by the network policy';
  const code = e?.code ?? e?.cause?.code;
  if (code && ERROR_TEXT[code]) return ERROR_TEXT[code];
  if (code && /CERT|TLS|SSL/.test(code)) return `TLS handshake failed (${code})`;
  return `Request failed (${code ?? e?.name ?? 'unknown error'})`;
}
