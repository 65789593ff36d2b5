import { Core, type ClientOptions } from './core.js';
import { accountsResource } from './resources/accounts.js';
import { dealsResource } from './resources/deals.js';
import { dealStagesResource } from './resources/deal-stages.js';
import { eventsResource } from './resources/events.js';
import { leadsResource } from './resources/leads.js';
import { meResource } from './resources/me.js';
import { objectsResource } from './resources/objects.js';
import { recordsResource } from './resources/records.js';
import { webhooksResource } from './resources/webhooks.js';
import { privacyResource } from './resources/privacy.js';
import { usersResource } from './resources/users.js';
import { notesResource } from './resources/notes.js';
import { tasksResource } from './resources/tasks.js';
import { timelineResource } from './resources/timeline.js';

export type { ClientOptions } from './core.js';

/** A client for one API key: one property per resource, each method typed from the OpenAPI document. */
export function createClient(options: ClientOptions) {
  const core = new Core(options);
  return {
    me: meResource(core),
    /** The organization's users: who can own a lead or deal. */
    users: usersResource(core),
    leads: leadsResource(core),
    accounts: accountsResource(core),
    deals: dealsResource(core),
    /** The deal pipeline: `get()`, and `put(stages, { moveTo })` to replace it. */
    dealStages: dealStagesResource(core),
    objects: objectsResource(core),
    /** The records of one custom object, by slug. */
    records: recordsResource(core),
    webhooks: webhooksResource(core),
    /** The change feed: what changed since a cursor (docs/sync.md). */
    events: eventsResource(core),
    privacy: privacyResource(core),
    notes: notesResource(core),
    tasks: tasksResource(core),
    /** An item's events, notes and tasks, newest first, with cursor iteration. */
    timeline: timelineResource(core),
  };
}

export type CrmClient = ReturnType<typeof createClient>;
