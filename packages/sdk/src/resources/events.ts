import type { Core } from '../core.js';
import type { CallOptions, Query, ResponseData } from '../types.js';
import type { WebhookEvent, WebhookEventType } from '../webhook-event.js';

const EVENTS = '/api/public/v1/events';

export type EventFeedQuery = Query<typeof EVENTS, 'get'>;
export type EventFeedPage = Omit<ResponseData<typeof EVENTS, 'get'>, 'events'> & { events: WebhookEvent[] };

export interface EventFeedOptions {
  /** A `nextCursor` from an earlier page; without it, from the oldest retained event. */
  after?: string;
  types?: readonly Exclude<WebhookEventType, 'webhook.test'>[];
  /** Events per request (1–1000, default 100). */
  limit?: number;
}

/**
 * The change feed (docs/sync.md): every change in commit order, as the same bodies and ids webhooks deliver.
 * Readable with any of leads:read, accounts:read, deals:read, records:read, notes:read, tasks:read (each shows
 * its own resource's events).
 */
export function eventsResource(core: Core) {
  const list = async ({ after, types, limit }: EventFeedOptions = {}, opts?: CallOptions): Promise<EventFeedPage> => {
    const query: EventFeedQuery = { ...(after !== undefined && { after }), ...(types !== undefined && { types: types.join(',') }), ...(limit !== undefined && { limit }) };
    return (await core.call(EVENTS, 'get', { query }, opts)) as EventFeedPage;
  };
  /**
   * Every page from `after` on, following `nextCursor`, the last one empty. Persist each page's `nextCursor` once
   * its events are applied: it is where the next run starts (`pages({ after })`), the empty page's included.
   */
  const pages = async function* (options: EventFeedOptions = {}, opts?: CallOptions): AsyncGenerator<EventFeedPage, void, undefined> {
    let after = options.after;
    for (;;) {
      const page = await list({ ...options, ...(after !== undefined && { after }) }, opts);
      yield page;
      if (page.events.length === 0) return;
      after = page.nextCursor;
    }
  };
  return {
    /** One page and its `nextCursor` (store it to resume; it is returned on an empty page too). */
    list,
    pages,
    /**
     * Every event from `after` on, until a page comes back empty. It hands out events, not cursors: to resume a
     * later run where this one stopped, iterate `pages` and persist their `nextCursor` (an event id is no cursor).
     */
    iterate: async function* (options: EventFeedOptions = {}, opts?: CallOptions): AsyncGenerator<WebhookEvent, void, undefined> {
      for await (const page of pages(options, opts)) yield* page.events;
    },
  };
}
