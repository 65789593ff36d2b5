import { CrmApiError } from '@crm/sdk';

/** The objects mirrored here, by the name events give them (`data.object`), with the SDK resource of each. */
const KINDS = { lead: 'leads', account: 'accounts', deal: 'deals' };

/** How many applied event ids to remember: a re-read after a crash repeats at most one page of the feed. */
const REMEMBERED_EVENTS = 5_000;

/**
 * Keeps a copy of an organization's leads, accounts and deals in step with the CRM, as docs/sync.md describes:
 * note where the change feed ends, load every list with cursor pages, then follow the feed from that point,
 * acting on each event once (dedupe by id) by fetching the item's current state (a 404 means it is gone:
 * deleted, purged or erased). Changes made while the lists load appear in the feed too, so none falls between.
 *
 * `state` is the plain object to persist (JSON): `{ cursor, items: { leads, accounts, deals }, applied }`;
 * `save(state)` is called after each applied page, so a restart re-reads at most one page.
 *
 * @param {{ client: import('@crm/sdk').CrmClient, state?: ReturnType<typeof emptyState>, save?: (state: ReturnType<typeof emptyState>) => Promise<void> }} options
 */
export function createMirror({ client, state = emptyState(), save = async () => {} }) {
  const applied = new Set(state.applied);

  /** The cursor at the feed's current end: where following starts once the lists are loaded. */
  async function feedEnd() {
    let cursor;
    for (;;) {
      const page = await client.events.list({ limit: 1000, ...(cursor && { after: cursor }) });
      cursor = page.nextCursor;
      if (page.events.length === 0) return cursor;
    }
  }

  /** The item's current state into the copy, or its removal when it is gone (deleted, purged, erased). */
  async function refresh(resource, id) {
    try {
      state.items[resource][id] = await client[resource].get(id);
    } catch (err) {
      if (!(err instanceof CrmApiError && err.status === 404)) throw err;
      delete state.items[resource][id];
    }
  }

  /** A page of events: each item they name is fetched once, however many of its events the page holds. */
  async function applyPage(events) {
    const fresh = events.filter((e) => KINDS[e.data.object] && !applied.has(e.id));
    const items = new Map(fresh.map((e) => [`${e.data.object}:${e.data.id}`, e.data]));
    for (const { object, id } of items.values()) await refresh(KINDS[object], id);
    for (const e of fresh) applied.add(e.id);
    for (const id of applied) {
      if (applied.size <= REMEMBERED_EVENTS) break;
      applied.delete(id);
    }
    return fresh.length;
  }

  /** First run: the feed's end, then every live item of every list (cursor pages: no repeats, no skips). */
  async function load() {
    state.cursor = await feedEnd();
    for (const resource of Object.values(KINDS)) {
      state.items[resource] = {};
      for await (const item of client[resource].iterate({ limit: 100 })) state.items[resource][item.id] = item;
    }
    await save(state);
  }

  /**
   * The page of events after the stored cursor. A cursor older than the feed's retention (the mirror was stopped
   * longer than EVENT_RETENTION_DAYS) answers 410 CURSOR_EXPIRED: events it never saw are gone, so it loads every
   * list again from a new feed end (docs/sync.md, "Retention") and reads on from there.
   */
  async function nextPage() {
    try {
      return await client.events.list({ after: state.cursor, limit: 1000 });
    } catch (err) {
      if (!(err instanceof CrmApiError && err.code === 'CURSOR_EXPIRED')) throw err;
      await load();
      return client.events.list({ after: state.cursor, limit: 1000 });
    }
  }

  return {
    state,
    load,
    /** Applies every event after the stored cursor, a page at a time; resolves with how many it applied. */
    async follow() {
      let count = 0;
      for (;;) {
        const page = await nextPage();
        count += await applyPage(page.events);
        state.cursor = page.nextCursor;
        state.applied = [...applied];
        await save(state);
        if (page.events.length === 0) return count;
      }
    },
  };
}

/** @returns {{ cursor: string | null, items: Record<'leads' | 'accounts' | 'deals', Record<string, unknown>>, applied: string[] }} */
export function emptyState() {
  return { cursor: null, items: { leads: {}, accounts: {}, deals: {} }, applied: [] };
}
