import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../helpers/receiver.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';
import { importCsv } from '../../src/modules/import/csv-import.js';
import { recordImportAdapter } from '../../src/modules/objects/records.import.js';
import { insertObject } from '../../src/modules/objects/objects.store.js';
import { newId } from '../../src/lib/ids.js';
import type { Field } from '../../src/modules/objects/definition.js';

let t: TestApp;
let a: Seeded;

beforeAll(async () => {
  t = await buildTestApp();
  a = await seedOrg(t.ctx);
  const created = await call(t.app, 'POST', '/objects', {
    auth: a.auth,
    body: {
      slug: 'visits',
      name: 'Visits',
      fields: [
        { key: 'visitDate', label: 'Visit date', type: 'date', required: true, role: 'due' },
        { key: 'contactEmail', label: 'E-mail', type: 'email' },
        { key: 'room_count', label: 'Rooms', type: 'number' },
        { key: 'visitNotes', label: 'Notes', type: 'text' },
      ],
    },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
});
afterAll(() => t.close());

describe('camelCase field keys', () => {
  it('a record with visitDate is created, read, updated, searched and named in its events', async () => {
    const created = await call(t.app, 'POST', '/objects/visits/records', { auth: a.auth, body: { visitDate: '2026-03-01', contactEmail: 'Ada@Example.com', room_count: 3, visitNotes: 'garden view' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.data.record.id;
    expect(created.body.data.record).toMatchObject({ visitDate: '2026-03-01T00:00:00.000Z', contactEmail: 'ada@example.com', room_count: 3 });
    const patched = await call(t.app, 'PATCH', `/objects/visits/records/${id}`, { auth: a.auth, body: { visitDate: '2026-03-05' } });
    expect(patched.body.data.record.visitDate).toBe('2026-03-05T00:00:00.000Z');
    const found = await call(t.app, 'GET', '/objects/visits/records?q=garden', { auth: a.auth });
    expect(found.body.data.records.map((r: { id: string }) => r.id)).toEqual([id]);
    await eventually(async () => {
      const events = (await call(t.app, 'GET', '/events?types=record.created,record.updated', { auth: a.auth })).body.data.events.filter((e: { data: { id: string } }) => e.data.id === id);
      expect(events.map((e: { data: { changes: unknown } }) => e.data.changes)).toEqual([
        { before: {}, after: { visitDate: '2026-03-01T00:00:00.000Z', contactEmail: '[encrypted]', room_count: 3, visitNotes: 'garden view' } },
        { before: { visitDate: '2026-03-01T00:00:00.000Z' }, after: { visitDate: '2026-03-05T00:00:00.000Z' } },
      ]);
    }, 20_000, 50);
  });

  it('the organization\'s OpenAPI document types the camelCase property', async () => {
    const doc = (await call(t.app, 'GET', '/api/public/v1/openapi.json', { auth: a.auth })).body;
    const schema = JSON.stringify(doc.components.schemas);
    expect(schema).toContain('"visitDate"');
  });

  it('a required camelCase field is enforced and named', async () => {
    const errors = expectError(await call(t.app, 'POST', '/objects/visits/records', { auth: a.auth, body: { room_count: 1 } }), 400, 'VALIDATION_FAILED');
    expect(errors).toEqual([{ field: 'visitDate', code: 'required', message: 'is required' }]);
  });

  it('CSV import takes visitDate as a column header', { timeout: 90_000 }, async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'crm-keys-')), 'visits.csv');
    writeFileSync(file, 'visitDate,room_count,visitNotes\n2026-04-02,2,imported\n');
    const report = await importCsv(t.ctx, { file, organizationId: a.orgId, adapter: await recordImportAdapter(t.ctx, a.orgId, 'visits'), allOrNothing: false });
    expect(report).toMatchObject({ rows: 1, imported: 1 });
    const found = await call(t.app, 'GET', '/objects/visits/records?q=imported', { auth: a.auth });
    expect(found.body.data.records[0]).toMatchObject({ visitDate: '2026-04-02T00:00:00.000Z', room_count: 2 });
  });
});

/** An object as stored before prototype names were refused (written past the API's checks). */
async function insertLegacyObject(slug: string, fields: Field[]) {
  const now = new Date().toISOString();
  await insertObject(t.ctx.database.db, { id: newId(), organizationId: a.orgId, slug, name: slug, definition: { fields, stages: [] }, createdAt: now, updatedAt: now });
}

describe('names every JavaScript object has', () => {
  it('constructor, toString, valueOf and hasOwnProperty are refused as keys, each with a clear message', async () => {
    const res = await call(t.app, 'POST', '/objects', {
      auth: a.auth,
      body: { slug: 'proto', name: 'Proto', fields: ['constructor', 'toString', 'valueOf', 'hasOwnProperty'].map((key) => ({ key, label: key, type: 'text' })) },
    });
    const errors = expectError(res, 400, 'VALIDATION_FAILED');
    expect(errors.map((e) => [e.field, e.code])).toEqual([0, 1, 2, 3].map((i) => [`fields.${i}.key`, 'reserved']));
    expect(errors[0]!.message).toBe('"constructor" is a name every JavaScript object has; choose another key (e.g. constructorValue)');
  });

  it('an object defined before the rule with a required field "constructor" keeps it, and the field is enforced', async () => {
    await insertLegacyObject('legacy', [{ key: 'constructor', label: 'Builder', type: 'text', required: true }]);
    const errors = expectError(await call(t.app, 'POST', '/objects/legacy/records', { auth: a.auth, body: {} }), 400, 'VALIDATION_FAILED');
    expect(errors).toEqual([{ field: 'constructor', code: 'required', message: 'is required' }]);
    const created = await call(t.app, 'POST', '/objects/legacy/records', { auth: a.auth, body: { constructor: 'Bob' } });
    expect(created.status).toBe(201);
    expect(created.body.data.record.constructor).toBe('Bob');
    const cleared = await call(t.app, 'PATCH', '/objects/legacy', { auth: a.auth, body: { fields: [{ key: 'constructor', label: 'Builder', type: 'text', required: true }, { key: 'extra', label: 'Extra', type: 'text' }] } });
    expect(cleared.status, JSON.stringify(cleared.body)).toBe(200);
    const other = await call(t.app, 'POST', '/objects/legacy/records', { auth: a.auth, body: { constructor: 'Ann', extra: 'x' } });
    expect(other.status).toBe(201);
    const listed = await call(t.app, 'GET', '/objects/legacy/records', { auth: a.auth });
    expect(listed.body.data.records.map((r: Record<string, unknown>) => [r.constructor, r.extra])).toEqual([['Ann', 'x'], ['Bob', null]]);
  });

  it('an optional prototype-named field left unset reads as null, not as a function', async () => {
    await insertLegacyObject('legacy2', [{ key: 'title', label: 'Title', type: 'text', required: false }, { key: 'constructor', label: 'Builder', type: 'text', required: false }]);
    const created = await call(t.app, 'POST', '/objects/legacy2/records', { auth: a.auth, body: { title: 'x' } });
    expect(created.status).toBe(201);
    expect(created.body.data.record.constructor).toBeNull();
  });
});
