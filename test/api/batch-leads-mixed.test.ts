import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import { setAssignmentRules } from '../../src/modules/orgs/rules.service.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { addUser, seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';

/**
 * Mixed batches pinned item by item: every kind of item (valid, invalid, hit, miss, the same key twice, ifMatch
 * right and wrong, a taken external id, a duplicate by e-mail or phone, an assignment rule) with its result
 * and its events, written against the batch runner that applied every upsert item alone, so that a faster
 * path answers exactly as it did. Ids are shown by name (`existing:<name>`, `item:<index>`, `user:<name>`).
 */
let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

interface World {
  org: Seeded;
  labels: Map<string, string>;
  tags: Map<string, string>;
  eventsBefore: number;
}

/** An organization with a rule (source EVENT → Rep), live leads, a duplicate, a trashed lead; ids named. */
async function world(): Promise<World> {
  const org = await seedOrg(t.ctx, { rateLimitPerMinute: 1_000_000 });
  const rep = await addUser(t.ctx, org.orgId, 'Rep');
  await setAssignmentRules(t.ctx.database, org.orgId, { rules: [{ id: 'events', match: { source: 'EVENT' }, assign: { type: 'user', userId: rep } }] }, new Date());
  const labels = new Map<string, string>([[org.userId, 'user:owner'], [rep, 'user:rep']]);
  const tags = new Map<string, string>();
  const create = async (body: Record<string, unknown>) => {
    const lead = (await call(t.app, 'POST', '/leads', { auth: org.auth, body })).body.data.lead;
    labels.set(lead.id, `existing:${body.name}`);
    tags.set(String(body.name), t.ctx.entityTagger.tagOf(lead));
    return lead;
  };
  await create({ name: 'Ada', email: 'ada@example.com', phoneNumber: '+14155550001', externalId: 'x-ada' });
  await create({ name: 'Bob', email: 'bob@example.com', externalId: 'x-bob' });
  await create({ name: 'Bob Again', email: 'bob@example.com' });
  await create({ name: 'Cy', email: 'cy@example.com', externalId: 'x-cy', title: 'Engineer' });
  await create({ name: 'Dee', email: 'dee@example.com', source: 'EVENT' });
  const gone = await create({ name: 'Gone', email: 'gone@example.com', externalId: 'x-gone' });
  await call(t.app, 'DELETE', `/leads/${gone.id}`, { auth: org.auth });
  const eventsBefore = (await listEvents(t.ctx.database.db, org.orgId)).length;
  return { org, labels, tags, eventsBefore };
}

/** Replaces every known id in a value by its name; drops times, event ids and tags (digests of ids and times), which differ from run to run. */
function named(w: World, value: unknown): unknown {
  if (typeof value === 'string') return w.labels.get(value) ?? value;
  if (Array.isArray(value)) return value.map((v) => named(w, v));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => !['createdAt', 'updatedAt', 'deletedAt', 'actor', 'organization', 'message', 'etag'].includes(k))
        .map(([k, v]) => [k, named(w, v)]),
    );
  }
  return value;
}

/** Sends a batch; names the leads it created; its results and the events it wrote, both by name. */
async function run(w: World, body: { upsertBy?: string; items: unknown[] }) {
  const res = await call(t.app, 'POST', '/leads/batch', { auth: w.org.auth, body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const results = res.body.data.results as { index: number; status: number; lead?: { id: string } }[];
  for (const r of results) if (r.status === 201) w.labels.set(r.lead!.id, `item:${r.index}`);
  const events = (await listEvents(t.ctx.database.db, w.org.orgId)).slice(w.eventsBefore);
  // Events of different leads may be written in another order than the items; each lead's own stay in order.
  const shown = events.map((e) => ({ type: e.type, lead: named(w, e.data.id), changes: named(w, e.data.changes) }));
  const byLead = [...new Set(shown.map((e) => e.lead as string))].sort().flatMap((lead) => shown.filter((e) => e.lead === lead));
  return { results: results.map((r) => named(w, r)), events: byLead };
}

describe('POST /leads/batch, mixed items, per item as the single writes answer them', () => {
  it('upsert by e-mail', async () => {
    const w = await world();
    const out = await run(w, {
      upsertBy: 'email',
      items: [
        { name: 'New One', email: 'new.one@example.com' },
        { name: '', email: 'broken@example.com' },
        { name: 'Ada L.', email: 'ADA@example.com', title: 'Countess' },
        { name: 'Bob B.', email: 'bob@example.com' },
        { name: 'Twin', email: 'twin@example.com', source: 'EVENT' },
        { name: 'Twin Again', email: 'twin@example.com', company: 'Twins Ltd' },
        { name: 'Cy', email: 'cy@example.com', ifMatch: '"stale"' },
        { name: 'Dee D.', email: 'dee@example.com', ifMatch: w.tags.get('Dee') },
        { name: 'Clash', email: 'clash@example.com', externalId: 'x-ada' },
        { name: 'Cy', email: 'cy@example.com', title: 'Engineer' },
        { name: 'Nobody', email: 'nobody@example.com', ifMatch: '*' },
        { name: 'Cy', email: 'cy@example.com', ownerId: 'aaaaaaaaaaaaaaaaaaaaaaaa' },
        { name: 'Cy', email: 'cy@example.com', phoneNumber: '+14155550001' },
        { name: 'Phone Twin', email: 'phone.twin@example.com', phoneNumber: '+14155550001' },
        { name: 'Back', email: 'gone@example.com' },
        { name: 'Bob Steals', email: 'bob@example.com', externalId: 'x-cy' },
        { name: 'Ada Again', email: 'ada@example.com', ifMatch: w.tags.get('Ada') },
        { name: 'No Mail' },
      ],
    });
    expect(out).toMatchInlineSnapshot(`
      {
        "events": [
          {
            "changes": {
              "after": {
                "name": "Ada L.",
                "title": "Countess",
              },
              "before": {
                "name": "Ada",
                "title": null,
              },
            },
            "lead": "existing:Ada",
            "type": "lead.updated",
          },
          {
            "changes": {
              "after": {
                "name": "Bob B.",
              },
              "before": {
                "name": "Bob",
              },
            },
            "lead": "existing:Bob",
            "type": "lead.updated",
          },
          {
            "changes": {
              "after": {
                "duplicateOf": "existing:Ada",
                "phoneNumber": "[encrypted]",
              },
              "before": {
                "duplicateOf": null,
                "phoneNumber": null,
              },
            },
            "lead": "existing:Cy",
            "type": "lead.updated",
          },
          {
            "changes": {
              "after": {
                "name": "Dee D.",
              },
              "before": {
                "name": "Dee",
              },
            },
            "lead": "existing:Dee",
            "type": "lead.updated",
          },
          {
            "changes": {
              "after": {
                "email": "[encrypted]",
                "name": "New One",
                "status": "NEW",
              },
              "before": {},
            },
            "lead": "item:0",
            "type": "lead.created",
          },
          {
            "changes": {
              "after": {
                "duplicateOf": "existing:Ada",
                "email": "[encrypted]",
                "name": "Phone Twin",
                "phoneNumber": "[encrypted]",
                "status": "NEW",
              },
              "before": {},
            },
            "lead": "item:13",
            "type": "lead.created",
          },
          {
            "changes": {
              "after": {
                "email": "[encrypted]",
                "name": "Back",
                "status": "NEW",
              },
              "before": {},
            },
            "lead": "item:14",
            "type": "lead.created",
          },
          {
            "changes": {
              "after": {
                "email": "[encrypted]",
                "name": "Twin",
                "ownerId": "user:rep",
                "source": "EVENT",
                "status": "NEW",
              },
              "before": {},
            },
            "lead": "item:4",
            "type": "lead.created",
          },
          {
            "changes": {
              "after": {
                "company": "Twins Ltd",
                "name": "Twin Again",
              },
              "before": {
                "company": null,
                "name": "Twin",
              },
            },
            "lead": "item:4",
            "type": "lead.updated",
          },
        ],
        "results": [
          {
            "index": 0,
            "lead": {
              "accountId": null,
              "company": null,
              "duplicateOf": null,
              "email": "new.one@example.com",
              "externalId": null,
              "id": "item:0",
              "name": "New One",
              "notes": null,
              "ownerId": null,
              "phoneNumber": null,
              "source": null,
              "sourceCampaign": null,
              "status": "NEW",
              "title": null,
            },
            "status": 201,
          },
          {
            "error": {
              "code": "VALIDATION_FAILED",
              "errors": [
                {
                  "code": "too_short",
                  "field": "name",
                },
              ],
            },
            "index": 1,
            "status": 400,
          },
          {
            "index": 2,
            "lead": {
              "accountId": null,
              "company": null,
              "duplicateOf": null,
              "email": "ada@example.com",
              "externalId": "x-ada",
              "id": "existing:Ada",
              "name": "Ada L.",
              "notes": null,
              "ownerId": null,
              "phoneNumber": "+14155550001",
              "source": null,
              "sourceCampaign": null,
              "status": "NEW",
              "title": "Countess",
            },
            "status": 200,
          },
          {
            "index": 3,
            "lead": {
              "accountId": null,
              "company": null,
              "duplicateOf": null,
              "email": "bob@example.com",
              "externalId": "x-bob",
              "id": "existing:Bob",
              "name": "Bob B.",
              "notes": null,
              "ownerId": null,
              "phoneNumber": null,
              "source": null,
              "sourceCampaign": null,
              "status": "NEW",
              "title": null,
            },
            "status": 200,
          },
          {
            "index": 4,
            "lead": {
              "accountId": null,
              "company": null,
              "duplicateOf": null,
              "email": "twin@example.com",
              "externalId": null,
              "id": "item:4",
              "name": "Twin",
              "notes": null,
              "ownerId": "user:rep",
              "phoneNumber": null,
              "source": "EVENT",
              "sourceCampaign": null,
              "status": "NEW",
              "title": null,
            },
            "status": 201,
          },
          {
            "index": 5,
            "lead": {
              "accountId": null,
              "company": "Twins Ltd",
              "duplicateOf": null,
              "email": "twin@example.com",
              "externalId": null,
              "id": "item:4",
              "name": "Twin Again",
              "notes": null,
              "ownerId": "user:rep",
              "phoneNumber": null,
              "source": "EVENT",
              "sourceCampaign": null,
              "status": "NEW",
              "title": null,
            },
            "status": 200,
          },
          {
            "error": {
              "code": "PRECONDITION_FAILED",
            },
            "index": 6,
            "lead": {
              "accountId": null,
              "company": null,
              "duplicateOf": null,
              "email": "cy@example.com",
              "externalId": "x-cy",
              "id": "existing:Cy",
              "name": "Cy",
              "notes": null,
              "ownerId": null,
              "phoneNumber": null,
              "source": null,
              "sourceCampaign": null,
              "status": "NEW",
              "title": "Engineer",
            },
            "status": 412,
          },
          {
            "index": 7,
            "lead": {
              "accountId": null,
              "company": null,
              "duplicateOf": null,
              "email": "dee@example.com",
              "externalId": null,
              "id": "existing:Dee",
              "name": "Dee D.",
              "notes": null,
              "ownerId": "user:rep",
              "phoneNumber": null,
              "source": "EVENT",
              "sourceCampaign": null,
              "status": "NEW",
              "title": null,
            },
            "status": 200,
          },
          {
            "error": {
              "code": "EXTERNAL_ID_TAKEN",
              "errors": [
                {
                  "code": "taken",
                  "field": "externalId",
                },
              ],
            },
            "index": 8,
            "status": 409,
          },
          {
            "index": 9,
            "lead": {
              "accountId": null,
              "company": null,
              "duplicateOf": null,
              "email": "cy@example.com",
              "externalId": "x-cy",
              "id": "existing:Cy",
              "name": "Cy",
              "notes": null,
              "ownerId": null,
              "phoneNumber": null,
              "source": null,
              "sourceCampaign": null,
              "status": "NEW",
              "title": "Engineer",
            },
            "status": 200,
          },
          {
            "error": {
              "code": "PRECONDITION_FAILED",
            },
            "index": 10,
            "status": 412,
          },
          {
            "error": {
              "code": "VALIDATION_FAILED",
              "errors": [
                {
                  "code": "not_found",
                  "field": "ownerId",
                },
              ],
            },
            "index": 11,
            "status": 400,
          },
          {
            "index": 12,
            "lead": {
              "accountId": null,
              "company": null,
              "duplicateOf": "existing:Ada",
              "email": "cy@example.com",
              "externalId": "x-cy",
              "id": "existing:Cy",
              "name": "Cy",
              "notes": null,
              "ownerId": null,
              "phoneNumber": "+14155550001",
              "source": null,
              "sourceCampaign": null,
              "status": "NEW",
              "title": "Engineer",
            },
            "status": 200,
          },
          {
            "index": 13,
            "lead": {
              "accountId": null,
              "company": null,
              "duplicateOf": "existing:Ada",
              "email": "phone.twin@example.com",
              "externalId": null,
              "id": "item:13",
              "name": "Phone Twin",
              "notes": null,
              "ownerId": null,
              "phoneNumber": "+14155550001",
              "source": null,
              "sourceCampaign": null,
              "status": "NEW",
              "title": null,
            },
            "status": 201,
          },
          {
            "index": 14,
            "lead": {
              "accountId": null,
              "company": null,
              "duplicateOf": null,
              "email": "gone@example.com",
              "externalId": null,
              "id": "item:14",
              "name": "Back",
              "notes": null,
              "ownerId": null,
              "phoneNumber": null,
              "source": null,
              "sourceCampaign": null,
              "status": "NEW",
              "title": null,
            },
            "status": 201,
          },
          {
            "error": {
              "code": "EXTERNAL_ID_TAKEN",
              "errors": [
                {
                  "code": "taken",
                  "field": "externalId",
                },
              ],
            },
            "index": 15,
            "status": 409,
          },
          {
            "error": {
              "code": "PRECONDITION_FAILED",
            },
            "index": 16,
            "lead": {
              "accountId": null,
              "company": null,
              "duplicateOf": null,
              "email": "ada@example.com",
              "externalId": "x-ada",
              "id": "existing:Ada",
              "name": "Ada L.",
              "notes": null,
              "ownerId": null,
              "phoneNumber": "+14155550001",
              "source": null,
              "sourceCampaign": null,
              "status": "NEW",
              "title": "Countess",
            },
            "status": 412,
          },
          {
            "error": {
              "code": "VALIDATION_FAILED",
              "errors": [
                {
                  "code": "required",
                  "field": "email",
                },
              ],
            },
            "index": 17,
            "status": 400,
          },
        ],
      }
    `);
  });

  it('upsert by externalId', async () => {
    const w = await world();
    const out = await run(w, {
      upsertBy: 'externalId',
      items: [
        { name: 'Ada X', externalId: 'x-ada', status: 'CONTACTED' },
        { name: 'Fresh', externalId: 'x-fresh', email: 'bob@example.com', source: 'EVENT' },
        { name: 'Fresh Again', externalId: 'x-fresh', notes: 'second' },
        { name: 'Back', externalId: 'x-gone' },
        { name: 'Cy', externalId: 'x-cy', ifMatch: w.tags.get('Cy'), phoneNumber: '+14155550001' },
        { name: 'Bob', externalId: 'x-bob', ifMatch: w.tags.get('Ada') },
        { name: 'Nokey', email: 'nokey@example.com' },
        { name: 'Bad', externalId: 'x-bad', status: 'NOPE' },
        { name: 'Dee?', externalId: 'x-dee', ownerId: 'aaaaaaaaaaaaaaaaaaaaaaaa' },
        { name: 'Ada Y', externalId: 'x-ada', title: 'After X' },
      ],
    });
    expect(out).toMatchInlineSnapshot(`
      {
        "events": [
          {
            "changes": {
              "after": {
                "name": "Ada X",
                "status": "CONTACTED",
              },
              "before": {
                "name": "Ada",
                "status": "NEW",
              },
            },
            "lead": "existing:Ada",
            "type": "lead.updated",
          },
          {
            "changes": {
              "after": {
                "name": "Ada Y",
                "title": "After X",
              },
              "before": {
                "name": "Ada X",
                "title": null,
              },
            },
            "lead": "existing:Ada",
            "type": "lead.updated",
          },
          {
            "changes": {
              "after": {
                "duplicateOf": "existing:Ada",
                "phoneNumber": "[encrypted]",
              },
              "before": {
                "duplicateOf": null,
                "phoneNumber": null,
              },
            },
            "lead": "existing:Cy",
            "type": "lead.updated",
          },
          {
            "changes": {
              "after": {
                "duplicateOf": "existing:Bob",
                "email": "[encrypted]",
                "externalId": "x-fresh",
                "name": "Fresh",
                "ownerId": "user:rep",
                "source": "EVENT",
                "status": "NEW",
              },
              "before": {},
            },
            "lead": "item:1",
            "type": "lead.created",
          },
          {
            "changes": {
              "after": {
                "name": "Fresh Again",
                "notes": "second",
              },
              "before": {
                "name": "Fresh",
                "notes": null,
              },
            },
            "lead": "item:1",
            "type": "lead.updated",
          },
        ],
        "results": [
          {
            "index": 0,
            "lead": {
              "accountId": null,
              "company": null,
              "duplicateOf": null,
              "email": "ada@example.com",
              "externalId": "x-ada",
              "id": "existing:Ada",
              "name": "Ada X",
              "notes": null,
              "ownerId": null,
              "phoneNumber": "+14155550001",
              "source": null,
              "sourceCampaign": null,
              "status": "CONTACTED",
              "title": null,
            },
            "status": 200,
          },
          {
            "index": 1,
            "lead": {
              "accountId": null,
              "company": null,
              "duplicateOf": "existing:Bob",
              "email": "bob@example.com",
              "externalId": "x-fresh",
              "id": "item:1",
              "name": "Fresh",
              "notes": null,
              "ownerId": "user:rep",
              "phoneNumber": null,
              "source": "EVENT",
              "sourceCampaign": null,
              "status": "NEW",
              "title": null,
            },
            "status": 201,
          },
          {
            "index": 2,
            "lead": {
              "accountId": null,
              "company": null,
              "duplicateOf": "existing:Bob",
              "email": "bob@example.com",
              "externalId": "x-fresh",
              "id": "item:1",
              "name": "Fresh Again",
              "notes": "second",
              "ownerId": "user:rep",
              "phoneNumber": null,
              "source": "EVENT",
              "sourceCampaign": null,
              "status": "NEW",
              "title": null,
            },
            "status": 200,
          },
          {
            "error": {
              "code": "EXTERNAL_ID_TAKEN",
              "errors": [
                {
                  "code": "taken",
                  "field": "externalId",
                },
              ],
            },
            "index": 3,
            "status": 409,
          },
          {
            "index": 4,
            "lead": {
              "accountId": null,
              "company": null,
              "duplicateOf": "existing:Ada",
              "email": "cy@example.com",
              "externalId": "x-cy",
              "id": "existing:Cy",
              "name": "Cy",
              "notes": null,
              "ownerId": null,
              "phoneNumber": "+14155550001",
              "source": null,
              "sourceCampaign": null,
              "status": "NEW",
              "title": "Engineer",
            },
            "status": 200,
          },
          {
            "error": {
              "code": "PRECONDITION_FAILED",
            },
            "index": 5,
            "lead": {
              "accountId": null,
              "company": null,
              "duplicateOf": null,
              "email": "bob@example.com",
              "externalId": "x-bob",
              "id": "existing:Bob",
              "name": "Bob",
              "notes": null,
              "ownerId": null,
              "phoneNumber": null,
              "source": null,
              "sourceCampaign": null,
              "status": "NEW",
              "title": null,
            },
            "status": 412,
          },
          {
            "error": {
              "code": "VALIDATION_FAILED",
              "errors": [
                {
                  "code": "required",
                  "field": "externalId",
                },
              ],
            },
            "index": 6,
            "status": 400,
          },
          {
            "error": {
              "code": "VALIDATION_FAILED",
              "errors": [
                {
                  "code": "invalid_value",
                  "field": "status",
                },
              ],
            },
            "index": 7,
            "status": 400,
          },
          {
            "error": {
              "code": "VALIDATION_FAILED",
              "errors": [
                {
                  "code": "not_found",
                  "field": "ownerId",
                },
              ],
            },
            "index": 8,
            "status": 400,
          },
          {
            "index": 9,
            "lead": {
              "accountId": null,
              "company": null,
              "duplicateOf": null,
              "email": "ada@example.com",
              "externalId": "x-ada",
              "id": "existing:Ada",
              "name": "Ada Y",
              "notes": null,
              "ownerId": null,
              "phoneNumber": "+14155550001",
              "source": null,
              "sourceCampaign": null,
              "status": "CONTACTED",
              "title": "After X",
            },
            "status": 200,
          },
        ],
      }
    `);
  });

  it('no upsertBy: creates only', async () => {
    const w = await world();
    const out = await run(w, {
      items: [
        { name: 'First', email: 'first@example.com', externalId: 'x-first' },
        { name: 'Second', email: 'first@example.com', externalId: 'x-first' },
        { name: 'Third', email: 'first@example.com', source: 'EVENT' },
        { name: 'Ada Copy', email: 'ada@example.com', externalId: 'x-ada' },
        { name: 'Ada Copy 2', phoneNumber: '+14155550001' },
        { name: 'With If', ifMatch: '*' },
        { name: 'Bad Owner', ownerId: 'aaaaaaaaaaaaaaaaaaaaaaaa' },
        { bogus: true },
      ],
    });
    expect(out).toMatchInlineSnapshot(`
      {
        "events": [
          {
            "changes": {
              "after": {
                "email": "[encrypted]",
                "externalId": "x-first",
                "name": "First",
                "status": "NEW",
              },
              "before": {},
            },
            "lead": "item:0",
            "type": "lead.created",
          },
          {
            "changes": {
              "after": {
                "duplicateOf": "item:0",
                "email": "[encrypted]",
                "name": "Third",
                "ownerId": "user:rep",
                "source": "EVENT",
                "status": "NEW",
              },
              "before": {},
            },
            "lead": "item:2",
            "type": "lead.created",
          },
          {
            "changes": {
              "after": {
                "duplicateOf": "existing:Ada",
                "name": "Ada Copy 2",
                "phoneNumber": "[encrypted]",
                "status": "NEW",
              },
              "before": {},
            },
            "lead": "item:4",
            "type": "lead.created",
          },
        ],
        "results": [
          {
            "index": 0,
            "lead": {
              "accountId": null,
              "company": null,
              "duplicateOf": null,
              "email": "first@example.com",
              "externalId": "x-first",
              "id": "item:0",
              "name": "First",
              "notes": null,
              "ownerId": null,
              "phoneNumber": null,
              "source": null,
              "sourceCampaign": null,
              "status": "NEW",
              "title": null,
            },
            "status": 201,
          },
          {
            "error": {
              "code": "EXTERNAL_ID_TAKEN",
              "errors": [
                {
                  "code": "taken",
                  "field": "externalId",
                },
              ],
            },
            "index": 1,
            "status": 409,
          },
          {
            "index": 2,
            "lead": {
              "accountId": null,
              "company": null,
              "duplicateOf": "item:0",
              "email": "first@example.com",
              "externalId": null,
              "id": "item:2",
              "name": "Third",
              "notes": null,
              "ownerId": "user:rep",
              "phoneNumber": null,
              "source": "EVENT",
              "sourceCampaign": null,
              "status": "NEW",
              "title": null,
            },
            "status": 201,
          },
          {
            "error": {
              "code": "EXTERNAL_ID_TAKEN",
              "errors": [
                {
                  "code": "taken",
                  "field": "externalId",
                },
              ],
            },
            "index": 3,
            "status": 409,
          },
          {
            "index": 4,
            "lead": {
              "accountId": null,
              "company": null,
              "duplicateOf": "existing:Ada",
              "email": null,
              "externalId": null,
              "id": "item:4",
              "name": "Ada Copy 2",
              "notes": null,
              "ownerId": null,
              "phoneNumber": "+14155550001",
              "source": null,
              "sourceCampaign": null,
              "status": "NEW",
              "title": null,
            },
            "status": 201,
          },
          {
            "error": {
              "code": "PRECONDITION_FAILED",
            },
            "index": 5,
            "status": 412,
          },
          {
            "error": {
              "code": "VALIDATION_FAILED",
              "errors": [
                {
                  "code": "not_found",
                  "field": "ownerId",
                },
              ],
            },
            "index": 6,
            "status": 400,
          },
          {
            "error": {
              "code": "VALIDATION_FAILED",
              "errors": [
                {
                  "code": "required",
                  "field": "name",
                },
                {
                  "code": "unknown_field",
                  "field": "bogus",
                },
              ],
            },
            "index": 7,
            "status": 400,
          },
        ],
      }
    `);
  });
});

/** Each item sent as a batch of its own, in order: what "as if sent one by one" means; created leads named by item. */
async function runOneByOne(w: World, body: { upsertBy?: string; items: unknown[] }) {
  const results: unknown[] = [];
  for (const [index, item] of body.items.entries()) {
    const res = await call(t.app, 'POST', '/leads/batch', { auth: w.org.auth, body: { ...body, items: [item] } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [result] = res.body.data.results as { status: number; lead?: { id: string } }[];
    if (result!.status === 201) w.labels.set(result!.lead!.id, `item:${index}`);
    results.push({ ...result, index });
  }
  const events = (await listEvents(t.ctx.database.db, w.org.orgId)).slice(w.eventsBefore);
  const shown = events.map((e) => ({ type: e.type, lead: named(w, e.data.id), changes: named(w, e.data.changes) }));
  const byLead = [...new Set(shown.map((e) => e.lead as string))].sort().flatMap((lead) => shown.filter((e) => e.lead === lead));
  return { results: results.map((r) => named(w, r)), events: byLead };
}

describe('POST /leads/batch, a later new lead after an earlier item that writes a contact or an external id', () => {
  it.each([
    ['an earlier hit takes the external id a later new lead asks for: the later one is refused', {
      upsertBy: 'email',
      items: [{ name: 'Ada now', email: 'ada@example.com', externalId: 'x-taken-later' }, { name: 'New', email: 'new.lead@example.com', externalId: 'x-taken-later' }],
    }],
    ['an earlier item gives a lead an e-mail: a later new lead with it is its duplicate', {
      upsertBy: 'externalId',
      items: [{ name: 'n1', externalId: 'T-n1' }, { name: 'n1b', externalId: 'T-n1', email: 't@example.com' }, { name: 'n2', externalId: 'T-n2', email: 't@example.com' }],
    }],
    ['the same with a phone, the earlier item a hit', {
      upsertBy: 'email',
      items: [{ name: 'Cy', email: 'cy@example.com', phoneNumber: '+1 415 555 0177' }, { name: 'Later', email: 'later@example.com', phoneNumber: '+14155550177' }, { name: 'Ada', email: 'ada@example.com', title: 'Countess' }],
    }],
  ])('%s, as sent one by one', async (_, body) => {
    const batched = await run(await world(), body);
    const single = await runOneByOne(await world(), body);
    expect(batched).toEqual(single);
  });
});
