import { describe, expect, it } from 'vitest';
import { finishDocument } from '../../src/http/openapi-document.js';
import { errorResponse } from '../../src/http/openapi-responses.js';

const envelope = { $ref: '#/components/schemas/ErrorEnvelope' };

describe('finishDocument', () => {
  it('turns a route\'s own named error into a shared response, and emits only the shared responses in use', () => {
    const conflict = { description: errorResponse('Conflict').description, content: { 'application/json': { schema: envelope } } };
    const openapiObject = {
      openapi: '3.1.0',
      security: [{ bearer: [] }],
      paths: { '/leads/{id}/restore': { post: { responses: { '200': { description: 'Default Response' }, '409': conflict } } } },
      components: { schemas: {} },
    };
    const events = { schema: { type: 'object' }, section: (ref: string) => ({ 'lead.created': { post: { requestBody: { content: { 'application/json': { schema: { $ref: ref } } } } } } }) };
    const doc = finishDocument(events as never)({ openapiObject } as never) as any;
    const responses = doc.paths['/leads/{id}/restore'].post.responses;
    expect(responses['409']).toEqual({ $ref: '#/components/responses/Conflict' });
    expect(Object.keys(doc.components.responses)).toEqual(['Conflict']);
    expect(doc.components.responses.Conflict.content['application/json'].example).toMatchObject({ status: false, code: 'CONFLICT' });
    expect(doc.webhooks['lead.created'].post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/WebhookEvent' });
    expect(Object.keys(responses['200'].headers)).toEqual(expect.arrayContaining(['X-Request-Id', 'RateLimit', 'X-RateLimit-Remaining']));
  });
});
