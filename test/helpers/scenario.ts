import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { call, type Res } from './http.js';
import type { Seeded } from './seed.js';

/**
 * A run through every resource the API has, writing contact details and reading them back the ways a client
 * would (by id, by exact search, by replaying an idempotent create), plus the usual mistakes. Shared by the
 * secrets scan and the key-rotation test; extend it as resources are added.
 */
export interface Scenario {
  /** Values that must never appear in clear outside an answer to their owner: contact details, as sent and stored. */
  secrets: string[];
  /** Every error answer's body text. */
  errorBodies: string[];
  leads: { id: string; email: string; phone: string }[];
  accounts: { id: string; email: string; phone: string }[];
  deals: string[];
  /** Records of a custom object with an e-mail and a phone field. */
  records: { object: string; id: string; email: string; phone: string }[];
  /** Webhook endpoints with their signing secrets (needs WEBHOOK_ALLOW_PRIVATE_NETWORKS for the local URL). */
  webhooks: { id: string; secrets: string[] }[];
  idempotent: { key: string; body: unknown; leadId: string };
}

export async function runScenario(app: FastifyInstance, org: Seeded, tag: string): Promise<Scenario> {
  const auth = org.auth;
  const errorBodies: string[] = [];
  const send = async (method: 'GET' | 'POST' | 'PATCH', path: string, opts: { body?: unknown; headers?: Record<string, string>; auth?: Record<string, string> } = {}): Promise<Res> => {
    const res = await call(app, method, path, { auth: opts.auth ?? auth, ...opts });
    if (res.status >= 400) errorBodies.push(JSON.stringify(res.body));
    return res;
  };
  // Phone numbers differ per tag too, so that two runs in one organization never match each other's searches.
  const block = 10 + ([...tag].reduce((h, c) => h * 31 + c.charCodeAt(0), 7) % 80);
  const people = [0, 1, 2].map((i) => ({
    name: `Person ${tag} ${i}`,
    email: `Person.${tag}.${i}@Example.org`,
    phoneSent: `+1 (415) 555-0${block}${i}`,
    phone: `+14155550${block}${i}`,
  }));
  const secrets = people.flatMap((p) => [p.email, p.email.toLowerCase(), p.phoneSent, p.phone, p.phone.slice(1), p.phone.slice(2)]);

  const leads: Scenario['leads'] = [];
  const idemBody = { name: people[0]!.name, email: people[0]!.email, phoneNumber: people[0]!.phoneSent, source: 'WEBSITE' };
  const idemKey = `scenario-${tag}`;
  const first = await send('POST', '/leads', { body: idemBody, headers: { 'idempotency-key': idemKey } });
  expect(first.status).toBe(201);
  expect((await send('POST', '/leads', { body: idemBody, headers: { 'idempotency-key': idemKey } })).headers['idempotent-replayed']).toBe('true');
  leads.push({ id: first.body.data.lead.id, email: people[0]!.email.toLowerCase(), phone: people[0]!.phone });
  for (const p of people.slice(1)) {
    const res = await send('POST', '/leads', { body: { name: p.name, email: p.email, phoneNumber: p.phoneSent } });
    expect(res.status).toBe(201);
    leads.push({ id: res.body.data.lead.id, email: p.email.toLowerCase(), phone: p.phone });
  }
  // A change of contact details, and a duplicate of the first person.
  const moved = `moved.${tag}@example.net`;
  secrets.push(moved);
  expect((await send('PATCH', `/leads/${leads[2]!.id}`, { body: { email: moved, status: 'CONTACTED' } })).status).toBe(200);
  leads[2]!.email = moved;
  const dup = await send('POST', '/leads', { body: { name: 'Same Person Again', email: people[0]!.email.toUpperCase() } });
  expect(dup.body.data.lead.duplicateOf).toBe(leads[0]!.id);
  secrets.push(people[0]!.email.toUpperCase());
  // Reads: by id, exact e-mail and phone search (the phone URL-encoded), substring of a name.
  for (const lead of leads) expect((await send('GET', `/leads/${lead.id}`)).body.data.lead.email).toBe(lead.email);
  expect((await send('GET', `/leads?q=${encodeURIComponent(people[1]!.email)}`)).body.data.leads).toHaveLength(1);
  expect((await send('GET', `/leads?q=${encodeURIComponent(people[1]!.phone)}`)).body.data.leads).toHaveLength(1);
  expect((await send('GET', `/leads?q=${encodeURIComponent(tag)}`)).status).toBe(200);
  // Mistakes: malformed contact details, unknown ids, a bad key that looks like the real one.
  const badEmail = `broken.${tag}@@example.org`;
  const badPhone = `+1 415 555 ${tag.length}9`;
  secrets.push(badEmail);
  expect((await send('POST', '/leads', { body: { name: 'Bad', email: badEmail, phoneNumber: badPhone } })).status).toBe(400);
  expect((await send('PATCH', `/leads/${leads[0]!.id}`, { body: { phoneNumber: '+999 123' } })).status).toBe(400);
  expect((await send('GET', '/leads/ffffffffffffffffffffffff')).status).toBe(404);
  const lookalike = `${org.key.slice(0, -1)}${org.key.endsWith('A') ? 'B' : 'A'}`;
  expect((await send('GET', '/me', { auth: { authorization: `Bearer ${lookalike}` } })).status).toBe(401);

  // Accounts carry contact details too; deals reference both and move through stages.
  const accounts: Scenario['accounts'] = [];
  for (const i of [0, 1]) {
    const email = `Office.${tag}.${i}@Company.example`;
    const phoneSent = `+44 20 7946 0${block}${i}`;
    const res = await send('POST', '/accounts', { body: { name: `Company ${tag} ${i}`, email, phoneNumber: phoneSent, industry: 'Computing' } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    accounts.push({ id: res.body.data.account.id, email: email.toLowerCase(), phone: res.body.data.account.phoneNumber });
    secrets.push(email, email.toLowerCase(), phoneSent, res.body.data.account.phoneNumber);
  }
  const movedOffice = `front.desk.${tag}@company.example`;
  secrets.push(movedOffice);
  expect((await send('PATCH', `/accounts/${accounts[1]!.id}`, { body: { email: movedOffice } })).status).toBe(200);
  accounts[1]!.email = movedOffice;
  expect((await send('GET', `/accounts?q=${encodeURIComponent(accounts[0]!.phone)}`)).body.data.accounts).toHaveLength(1);
  expect((await send('POST', '/accounts', { body: { name: 'Bad Account', email: `nope.${tag}@` } })).status).toBe(400);
  const deals: string[] = [];
  const deal = await send('POST', '/deals', { body: { name: `Deal ${tag}`, accountId: accounts[0]!.id, leadId: leads[0]!.id, amount: '1200.50', currency: 'EUR' } });
  expect(deal.status, JSON.stringify(deal.body)).toBe(201);
  deals.push(deal.body.data.deal.id);
  for (const stage of ['proposal', 'negotiation', 'won']) expect((await send('PATCH', `/deals/${deals[0]}`, { body: { stage } })).status).toBe(200);
  expect((await send('PATCH', `/deals/${deals[0]}`, { body: { stage: 'no-such-stage' } })).status).toBe(400);

  // A custom object whose records carry contact details of their own.
  const object = `visits_${tag}`;
  const defined = await send('POST', '/objects', {
    body: { slug: object, name: 'Visits', fields: [{ key: 'title', label: 'Title', type: 'text' }, { key: 'guest_email', label: 'Guest e-mail', type: 'email' }, { key: 'guest_phone', label: 'Guest phone', type: 'phone' }], stages: [{ key: 'planned', label: 'Planned' }, { key: 'done', label: 'Done' }] },
  });
  expect(defined.status, JSON.stringify(defined.body)).toBe(201);
  const records: Scenario['records'] = [];
  for (const i of [0, 1]) {
    const email = `Guest.${tag}.${i}@Visitors.example`;
    const phoneSent = `+33 1 42 68 ${block} 0${i}`;
    const res = await send('POST', `/objects/${object}/records`, { body: { title: `Visit ${tag} ${i}`, guest_email: email, guest_phone: phoneSent } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    records.push({ object, id: res.body.data.record.id, email: res.body.data.record.guest_email, phone: res.body.data.record.guest_phone });
    secrets.push(email, email.toLowerCase(), phoneSent, res.body.data.record.guest_phone);
  }
  expect((await send('PATCH', `/objects/${object}/records/${records[0]!.id}`, { body: { stage: 'done', title: `Visit ${tag} done` } })).status).toBe(200);
  expect((await send('GET', `/objects/${object}/records?q=${encodeURIComponent(tag)}`)).status).toBe(200);
  expect((await send('POST', `/objects/${object}/records`, { body: { title: 'Bad', guest_email: `bad.guest.${tag}@` } })).status).toBe(400);

  // A webhook endpoint: its secret is shown once at creation and once per rotation, never again.
  const hook = await send('POST', '/webhooks', { body: { url: `http://127.0.0.1:9/hooks/${tag}`, events: ['*'], description: `Sync ${tag}` } });
  expect(hook.status, JSON.stringify(hook.body)).toBe(201);
  const hookId = hook.body.data.webhook.id as string;
  const rotated = await send('POST', `/webhooks/${hookId}/rotate-secret`, { headers: { 'idempotency-key': `rotate-${tag}` } });
  expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
  const webhookSecrets = [hook.body.data.webhook.secret as string, rotated.body.data.webhook.secret as string];
  expect(webhookSecrets.every((x) => typeof x === 'string' && x.length > 20)).toBe(true);
  secrets.push(...webhookSecrets, ...webhookSecrets.map((x) => x.replace(/^whsec_/, '')));
  expect((await send('GET', `/webhooks/${hookId}`)).body.data.webhook.secret).toBeUndefined();
  expect((await send('POST', `/webhooks/${hookId}/test`, { body: {} })).status).toBe(201);
  expect((await send('POST', '/webhooks', { body: { url: 'ftp://nowhere.example/x', events: ['*'] } })).status).toBe(400);
  return { secrets, errorBodies, leads, accounts, deals, records, webhooks: [{ id: hookId, secrets: webhookSecrets }], idempotent: { key: idemKey, body: idemBody, leadId: leads[0]!.id } };
}
