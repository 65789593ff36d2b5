// A webhook subscriber in plain Node (node:http, no framework), built on the SDK:
//  1. verify the signature over the RAW body, and refuse anything else with 400;
//  2. answer 204 at once — the CRM waits 10 s at most, and a slow answer is a failed delivery that will be retried;
//  3. then, in the background: skip an event already seen (deliveries are at-least-once), skip our own
//     echoes (changes this subscriber itself made through the API), fetch the CURRENT record (events are
//     thin and may arrive late or out of order), and hand both to `handle`.
// Answering before the work is done means a crash in between loses that event: to never lose one, persist
// the event (e.g. insert into a jobs table, keyed by event id) before answering.
import { EventEmitter } from 'node:events';
import { createServer } from 'node:http';
import { CrmApiError, verifyWebhook } from '@crm/sdk';

const MAX_BODY_BYTES = 1024 * 1024;

/** Event ids seen recently: enough to absorb redeliveries; a database unique key does this in production. */
export class RecentIds {
  #ids = new Set();
  constructor(capacity = 10_000) {
    this.capacity = capacity;
  }
  /** True when the id was new (and is now remembered). */
  add(id) {
    if (this.#ids.has(id)) return false;
    this.#ids.add(id);
    if (this.#ids.size > this.capacity) this.#ids.delete(this.#ids.values().next().value);
    return true;
  }
}

/**
 * Our own write comes back as an event whose actor is our API key on the channel we write through.
 * Matching the channel alone would also drop every other integration's API writes, and matching the key
 * alone would drop changes a person or agent made with the same key through another channel (MCP).
 */
export function isOwnEcho(actor, self) {
  return actor.type === 'API_KEY' && actor.id === self.keyId && actor.channel === (self.channel ?? 'API');
}

/** The record as it is now (null when it was deleted meanwhile or the event is not about a record). */
export async function fetchCurrent(client, event) {
  const { object, id, objectSlug } = event.data;
  const readers = {
    lead: () => client.leads.get(id),
    account: () => client.accounts.get(id),
    deal: () => client.deals.get(id),
    record: () => client.records(objectSlug).get(id),
  };
  if (!readers[object]) return null;
  try {
    return await readers[object]();
  } catch (err) {
    if (err instanceof CrmApiError && err.code === 'NOT_FOUND') return null;
    throw err;
  }
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error('body too large'));
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/**
 * @param {object} opts
 * @param {ReturnType<import('@crm/sdk').createClient>} opts.client  the SDK client (its key is `self.keyId`)
 * @param {string | string[]} opts.secret  the endpoint's signing secret(s)
 * @param {{ keyId: string, channel?: string }} opts.self  who "we" are, to recognise our own echoes
 * @param {(work: { event: import('@crm/sdk').WebhookEvent, current: unknown, client: any }) => Promise<void>} opts.handle
 * @param {string} [opts.path]  where deliveries are posted (default /webhooks/crm)
 * Emits `processed` ({ eventId, outcome: 'handled' | 'duplicate' | 'echo' | 'failed', error? }) and `rejected` (error).
 */
export function createSubscriber({ client, secret, self, handle, path = '/webhooks/crm', seen = new RecentIds() }) {
  const events = new EventEmitter();
  const done = (eventId, outcome, error) => events.emit('processed', { eventId, outcome, error });

  async function work(event) {
    if (!seen.add(event.id)) return done(event.id, 'duplicate');
    if (isOwnEcho(event.data.actor, self)) return done(event.id, 'echo');
    try {
      const current = await fetchCurrent(client, event);
      await handle({ event, current, client });
      done(event.id, 'handled');
    } catch (error) {
      done(event.id, 'failed', error);
    }
  }

  const server = createServer(async (req, res) => {
    if (req.method !== 'POST' || req.url !== path) return res.writeHead(404).end();
    let event;
    try {
      event = await verifyWebhook(await readBody(req), req.headers, secret);
    } catch (error) {
      events.emit('rejected', error);
      return res.writeHead(400, { 'content-type': 'text/plain' }).end('invalid webhook');
    }
    res.writeHead(204).end();
    void work(event);
  });
  return { server, events };
}

const FREE_MAIL = new Set(['gmail.com', 'outlook.com', 'hotmail.com', 'yahoo.com', 'icloud.com', 'proton.me']);

/**
 * The example's work: fill in a lead's company from its e-mail domain. Its own update comes back as
 * lead.updated from our key — the echo that `isOwnEcho` skips, so this never loops.
 * @param {{ event: import('@crm/sdk').WebhookEvent, current: any, client: any }} work
 */
export async function enrichLead({ event, current, client }) {
  if (event.data.object !== 'lead' || !current || current.company || !current.email) return;
  const domain = current.email.split('@')[1];
  if (!domain || FREE_MAIL.has(domain)) return;
  const label = domain.split('.')[0];
  await client.leads.update(current.id, { company: label.charAt(0).toUpperCase() + label.slice(1) });
}
