import type { Actor } from '../orgs/principal.js';

/** Who a service acts for: the organization every read and write is confined to, and the actor events name. */
export interface Caller {
  organizationId: string;
  actor: Actor;
}
