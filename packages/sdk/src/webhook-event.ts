import type { RequestBody } from './types.js';

/** The event types a webhook endpoint can subscribe to (contract §5), from the OpenAPI document. */
export type WebhookEventType = Exclude<RequestBody<'/api/public/v1/webhooks', 'post'>['events'][number], '*'>;

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
