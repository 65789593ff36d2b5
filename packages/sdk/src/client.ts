import { Core, type ClientOptions } from './core.js';
import { leadsResource } from './resources/leads.js';
import { meResource } from './resources/me.js';

export type { ClientOptions } from './core.js';

/** A client for one API key: one property per resource, each method typed from the OpenAPI document. */
export function createClient(options: ClientOptions) {
  const core = new Core(options);
  return {
    me: meResource(core),
    leads: leadsResource(core),
  };
}

export type CrmClient = ReturnType<typeof createClient>;
