/** The event types a webhook endpoint can subscribe to (contract §5). */
export type WebhookEventType =
  | 'lead.created'
  | 'lead.updated'
  | 'account.created'
  | 'account.updated'
  | 'deal.created'
  | 'deal.updated'
  | 'deal.stage_changed'
  | 'record.created'
  | 'record.updated'
  | 'record.stage_changed'
  | 'record.due'
  | 'webhook.test';

/** Who made the change: `channel` tells an integration whether it is looking at its own write (an "echo"). */
export interface WebhookActor {
  type: 'API_KEY' | 'USER' | 'SYSTEM';
  id: string;
  channel: 'API' | 'UI' | 'MCP' | 'COPILOT';
}

/**
 * A delivery's body. It is thin on purpose: fetch the current record with the client when you need more
 * than what changed (contact fields appear as "[encrypted]" in `changes`, never in clear).
 */
export interface WebhookEvent<T extends WebhookEventType = WebhookEventType> {
  /** `evt_…`, the same on every retry of the delivery: dedupe on it. */
  id: string;
  type: T;
  createdAt: string;
  /** Organization id. */
  organization: string;
  data: {
    /** `lead`, `account`, `deal`, `record` or `webhook`. */
    object: string;
    id: string;
    description: string;
    changes: { before: Record<string, unknown>; after: Record<string, unknown> };
    actor: WebhookActor;
    /** Custom object of a `record.*` event. */
    objectSlug?: string;
  };
}
