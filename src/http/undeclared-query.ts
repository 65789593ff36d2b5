import { Type } from '@sinclair/typebox';
import type { RouteOptions } from 'fastify';
import { API_PREFIX } from './openapi.js';

/** The query of a route that declares no parameter: any one is unknown. */
const NoQuery = Type.Object({}, { additionalProperties: false });

/**
 * A public API route that declares no query parameters refuses any, as the lists refuse an unknown one
 * (`400 VALIDATION_FAILED`, `unknown_field`, naming it): a typo or a parameter of another API
 * (`POST /leads?dryRun=true`, `PATCH /leads/{id}?upsert=true`) must not be dropped while the request does
 * something else. The document (hidden) and routes outside the API are left alone.
 */
export function refuseUndeclaredQuery(route: RouteOptions): void {
  if (!route.url.startsWith(`${API_PREFIX}/`) || !route.schema || route.schema.hide || route.schema.querystring) return;
  route.schema.querystring = NoQuery;
}
