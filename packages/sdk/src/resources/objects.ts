import type { Core } from '../core.js';
import type { CallOptions, CreateOptions, Query, RequestBody, ResponseData, Schema } from '../types.js';
import { listing } from './listing.js';

const OBJECTS = '/api/public/v1/objects';
const OBJECT = '/api/public/v1/objects/{slug}';

export type CustomObject = Schema<'CustomObject'>;
export type CustomObjectCreate = RequestBody<typeof OBJECTS, 'post'>;
export type CustomObjectUpdate = RequestBody<typeof OBJECT, 'patch'>;
export type CustomObjectQuery = Query<typeof OBJECTS, 'get'>;
export type CustomObjectPage = ResponseData<typeof OBJECTS, 'get'>;

/** Custom object definitions (fields and stages); reading needs records:read or objects:admin, changing objects:admin. */
export function objectsResource(core: Core) {
  // Objects are addressed by slug, which is also their `id` for iteration purposes.
  const bySlug = (page: CustomObjectPage) => page.objects.map((o) => ({ ...o, id: o.slug }));
  return {
    create: async (body: CustomObjectCreate, opts?: CreateOptions): Promise<CustomObject> => (await core.create(OBJECTS, body, opts)).object,
    get: async (slug: string, opts?: CallOptions): Promise<CustomObject> => (await core.call(OBJECT, 'get', { params: { slug } }, opts)).object,
    update: async (slug: string, patch: CustomObjectUpdate, opts?: CallOptions): Promise<CustomObject> => (await core.call(OBJECT, 'patch', { params: { slug }, body: patch }, opts)).object,
    ...listing((query: CustomObjectQuery, opts?: CallOptions) => core.call(OBJECTS, 'get', { query }, opts), bySlug),
  };
}
