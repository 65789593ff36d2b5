import type { FastifyInstance, InjectOptions } from 'fastify';
import { expect } from 'vitest';

export const API = '/api/public/v1';
/** Paths served outside the versioned API prefix; every other path is taken relative to it. */
const ROOT_PATHS = ['/api', '/health', '/ready', '/openapi', '/docs', '/metrics', '/admin', '/mcp'];

export interface Res {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: any;
}

/** app.inject with a JSON body and parsed JSON answer. */
export async function call(app: FastifyInstance, method: InjectOptions['method'], path: string, opts: { auth?: Record<string, string>; body?: unknown; headers?: Record<string, string> } = {}): Promise<Res> {
  const res = await app.inject({
    method,
    url: ROOT_PATHS.some((p) => path.startsWith(p)) ? path : API + path,
    headers: { ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}), ...opts.auth, ...opts.headers },
    ...(opts.body !== undefined ? { payload: typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body) } : {}),
  });
  let body: unknown = res.body;
  try {
    body = JSON.parse(res.body);
  } catch {
    /* non-JSON answers (docs page) stay text */
  }
  return { status: res.statusCode, headers: res.headers, body };
}

/** Asserts the error envelope of the contract and returns its field errors. */
export function expectError(res: Res, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toMatchObject({ status: false, code, message: expect.any(String), requestId: expect.any(String) });
  expect(res.body.requestId).toBe(res.headers['x-request-id']);
  return (res.body.errors ?? []) as { field: string; code: string; message: string }[];
}
