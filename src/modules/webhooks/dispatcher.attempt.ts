// One claimed delivery → one signed attempt → the outcome to record. No database access here.

import type { Dispatcher } from 'undici';
import type { FieldCipher } from '../../crypto/field-cipher.js';
import type { Clock } from '../../lib/clock.js';
import { decide, type AttemptResult } from './dispatcher.outcome.js';
import { sendAttempt } from './dispatcher.send.js';
import type { Job } from './dispatcher.store.js';
import type { Outcome } from './dispatcher.work.js';
import { signingSecrets } from './webhook-secrets.js';

export interface AttemptDeps {
  agent: Dispatcher;
  cipher: FieldCipher;
  /** Business clock: attempt times, retry schedule, leases. */
  clock: Clock;
  /** Wall clock for the signature timestamp, which receivers compare with their own. */
  signingClock: Clock;
  timeoutMs: number;
  random: () => number;
  secretCache: Map<string, string>;
  log: { debug(obj: object, msg: string): void; info(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

export async function runAttempt(job: Job, deps: AttemptDeps): Promise<Outcome> {
  const startedAt = deps.clock.now();
  const base = { kind: 'release' as const, deliveryId: job.deliveryId, leaseToken: job.leaseToken, now: startedAt.toISOString() };
  if (!job.enabled) return { ...base, outcome: { failed: 'Endpoint disabled before the attempt' } };
  // Too little lease left to finish: another worker may take the row over while we send. Hand it back.
  if (startedAt.getTime() + deps.timeoutMs > new Date(job.leaseUntil).getTime()) return { ...base, outcome: { dueAt: base.now } };

  let secrets: string[] = [];
  try {
    secrets = signingSecrets(deps.cipher, job.secrets, startedAt, deps.secretCache);
  } catch (err) {
    // A key missing from ENCRYPTION_KEY(S_RETIRED): counted as a failed attempt, so it can't loop silently.
    deps.log.error({ err, webhookId: job.endpointId }, 'webhook signing secret could not be decrypted');
  }
  const result: AttemptResult = secrets.length
    ? await sendAttempt(
        deps.agent,
        { deliveryId: job.deliveryId, eventId: job.eventId, eventType: job.eventType, url: job.url, body: job.body, secrets },
        { timeoutMs: deps.timeoutMs, timestamp: Math.floor(deps.signingClock.now().getTime() / 1000), startedAt },
      )
    : { startedAt, durationMs: 0, responseStatus: null, responseExcerpt: null, error: 'Not sent: the signing secret could not be decrypted', succeeded: false, retryAfter: undefined };

  const finishedAt = deps.clock.now();
  const { delivery, endpoint } = decide(job.attempt, result, finishedAt, deps.random);
  const logged = { deliveryId: job.deliveryId, webhookId: job.endpointId, eventId: job.eventId, attempt: job.attempt, status: result.responseStatus, durationMs: result.durationMs };
  if (result.succeeded) deps.log.debug(logged, 'webhook delivered');
  else deps.log.info({ ...logged, error: delivery.error, next: delivery.status }, 'webhook attempt failed');
  return {
    kind: 'attempt',
    endpointId: job.endpointId,
    endpointFailing: job.endpointFailing,
    signal: endpoint,
    record: {
      deliveryId: job.deliveryId,
      leaseToken: job.leaseToken,
      attempt: job.attempt,
      startedAt: startedAt.toISOString(),
      durationMs: result.durationMs,
      responseStatus: result.responseStatus,
      responseExcerpt: result.responseExcerpt,
      error: result.error,
      succeeded: result.succeeded,
      decision: delivery,
      now: finishedAt.toISOString(),
    },
  };
}
