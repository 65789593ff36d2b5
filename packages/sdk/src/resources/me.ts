import type { Core } from '../core.js';
import type { CallOptions, ResponseData } from '../types.js';

export type Me = ResponseData<'/api/public/v1/me', 'get'>['me'];

export function meResource(core: Core) {
  return {
    /** The calling key's organization, scopes, user and rate limit. */
    get: async (opts?: CallOptions): Promise<Me> => (await core.call('/api/public/v1/me', 'get', {}, opts)).me,
  };
}
