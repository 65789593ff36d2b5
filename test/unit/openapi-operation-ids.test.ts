import { describe, expect, it } from 'vitest';
import type { FastifySchema, RouteOptions } from 'fastify';
import { withOperationId } from '../../src/http/openapi-document.js';
import { deriveOperationId, singular } from '../../src/http/openapi-operation-ids.js';

const P = '/api/public/v1';

describe('deriveOperationId', () => {
  it.each([
    ['GET', '/leads', 'listLeads'],
    ['POST', '/leads', 'createLead'],
    ['GET', '/leads/:id', 'getLead'],
    ['PATCH', '/leads/:id', 'updateLead'],
    ['PUT', '/leads/:id', 'replaceLead'],
    ['DELETE', '/leads/:id', 'deleteLead'],
    ['POST', '/leads/:id/restore', 'restoreLead'],
    ['POST', '/accounts/:id/restore', 'restoreAccount'],
    ['GET', '/deal-stages', 'listDealStages'],
    ['GET', '/objects/:slug', 'getObject'],
    ['GET', '/objects/:object/records', 'listRecords'],
    ['POST', '/objects/:object/records', 'createRecord'],
    ['GET', '/objects/:object/records/:id', 'getRecord'],
    ['DELETE', '/objects/:object/records/:id', 'deleteRecord'],
    ['POST', '/objects/:object/records/:id/restore', 'restoreRecord'],
    ['POST', '/webhooks/:id/rotate-secret', 'rotateWebhookSecret'],
    ['POST', '/webhooks/:id/test', 'testWebhook'],
    ['GET', '/webhooks/:id/deliveries', 'listDeliveries'],
    ['POST', '/webhooks/:id/deliveries/:deliveryId/retry', 'retryDelivery'],
    ['GET', '/me', 'getMe'],
    ['POST', '/privacy/erasures', 'createPrivacyErasure'],
    ['GET', '/privacy/erasures', 'listPrivacyErasures'],
    ['GET', '/privacy/erasures/:id', 'getPrivacyErasure'],
    ['GET', '/privacy/subject', 'getPrivacySubject'],
  ])('%s %s → %s', (method, path, expected) => {
    expect(deriveOperationId(method, `${P}${path}`, P)).toBe(expected);
    expect(deriveOperationId(method, `${P}${path.replace(/:(\w+)/g, '{$1}')}`, P)).toBe(expected);
  });

  it('singularizes the usual English plurals and leaves other words alone', () => {
    expect(['leads', 'deliveries', 'addresses', 'boxes', 'stages', 'access', 'status'].map(singular)).toEqual(['lead', 'delivery', 'address', 'box', 'stage', 'access', 'status']);
  });

  it('is what the document uses unless the route names its operation in its schema', () => {
    const transform = withOperationId(P);
    const route = (schema: FastifySchema) => ({ schema, url: `${P}/leads/:id/restore`, route: { method: 'POST' } as RouteOptions });
    expect(transform(route({ summary: 'Restore' })).schema).toMatchObject({ operationId: 'restoreLead', summary: 'Restore' });
    expect(transform(route({ operationId: 'undeleteLead' } as FastifySchema)).schema).toMatchObject({ operationId: 'undeleteLead' });
  });
});
