import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { KEY_LOOKUP_CHANNEL } from './migrations/0013_key_lookup_notify.js';

/** How long a revocation waits for every listener's acknowledgment before it answers anyway. */
const SYNC_TIMEOUT_MS = 2_000;
/** Pause before listening again after the listening connection failed. */
const RECONNECT_MS = 1_000;
/** Listening connections name themselves so (application_name), which is how `sync` finds them all. */
const LISTENER_NAME = 'crm-key-listener:';
const SYNC = 'sync:';
const ACK = 'ack:';
/** Statements that can fire the key tables' or the assignment rules' triggers (Kysely writes `update "api_keys" …`). */
const KEY_TABLE_WRITE = /^((update|delete from) "?(api_keys|organizations|users)"?|(insert into|update|delete from) "?assignment_rules"?)\s/i;

type Query = (config: unknown, ...rest: unknown[]) => unknown;

/**
 * PostgreSQL's counterpart of SQLite's `data_version` for the key lookup cache: one connection per database
 * handle LISTENs on the channel the key tables' triggers notify (migration 0013), and `version()` moves
 * whenever one of those tables changed in this schema, in any instance or process.
 *
 * While the connection is not listening (starting, broken, reconnecting) `version()` returns a new number on
 * every call, so nothing is served from a cache that could have missed a notification; a reconnection also
 * moves it. A notification reaches each listener after its commit, each at its own pace, so a revocation
 * could still be unknown to another instance when the revoking request answers: `sync()` closes that gap. It
 * sends a marker on the channel and waits until every listening connection of the database has acknowledged
 * it; a listener handles notifications in commit order, so by its acknowledgment it has seen the revocation.
 * A handle that changed a key table syncs before it closes (`crm key revoke`, SQL through another handle).
 *
 * The connection listens from the first `version()` or `sync()`: processes that never authenticate a key
 * (the CLI's other commands, workers) open none.
 */
export class ChangeFeed {
  private counter = 0;
  private listening = false;
  private client: pg.Client | undefined;
  /** The schema of this connection's api_keys table; notifications of other schemas of the database are ignored. */
  private schema: string | undefined;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;
  private readonly id = randomUUID();
  /** Per marker of a sync in progress: the listeners yet to acknowledge it, and what to call when none are left. */
  private readonly waiting = new Map<string, { pending: Set<string>; done: () => void }>();
  private started: Promise<void> | undefined;
  /** This handle's own connections wrote to a key table. */
  private changedHere = false;

  constructor(
    private readonly connect: () => pg.Client,
    private readonly notify: (payload: string) => Promise<unknown>,
  ) {}

  /** Notes key-table writes made through `client` (a pooled connection of this handle). */
  watch(client: { query: unknown }): void {
    const query = (client.query as Query).bind(client);
    client.query = (config: unknown, ...rest: unknown[]) => {
      if (typeof config === 'string' && KEY_TABLE_WRITE.test(config)) this.changedHere = true;
      return query(config, ...rest);
    };
  }

  version(): number {
    this.started ??= this.listen();
    return this.listening ? this.counter : ++this.counter;
  }

  async sync(): Promise<void> {
    this.started ??= this.listen();
    await Promise.race([this.started, new Promise((r) => setTimeout(r, SYNC_TIMEOUT_MS).unref())]);
    const client = this.client;
    if (!this.listening || !client) return;
    const { rows } = await client.query<{ name: string }>(
      'select application_name as name from pg_stat_activity where datname = current_database() and application_name like $1',
      [`${LISTENER_NAME}%`],
    );
    const marker = randomUUID();
    const pending = new Set(rows.map((r) => r.name.slice(LISTENER_NAME.length)));
    if (pending.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const acknowledged = new Promise<void>((done) => {
      this.waiting.set(marker, { pending, done });
      timer = setTimeout(done, SYNC_TIMEOUT_MS);
    });
    try {
      await this.notify(SYNC + marker);
      await acknowledged;
    } finally {
      clearTimeout(timer);
      this.waiting.delete(marker);
    }
  }

  async close(): Promise<void> {
    if (this.changedHere) await this.sync().catch(() => undefined);
    this.closed = true;
    clearTimeout(this.retry);
    this.listening = false;
    await this.client?.end().catch(() => undefined);
  }

  private async listen(): Promise<void> {
    const client = this.connect();
    this.client = client;
    client.on('notification', (n) => this.received(client, n.payload ?? ''));
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`listen ${KEY_LOOKUP_CHANNEL}`);
      // The tables are resolved through the same search_path as the pool's; not migrated yet: try again later.
      const { rows } = await client.query<{ schema: string }>(
        `select n.nspname as schema from pg_class c join pg_namespace n on n.oid = c.relnamespace where c.oid = to_regclass('api_keys')`,
      );
      if (!rows[0]) throw new Error('api_keys does not exist yet');
      this.schema = rows[0].schema;
      // Named only once listening: a sync never waits for a connection that can't acknowledge.
      await client.query(`select set_config('application_name', $1, false)`, [LISTENER_NAME + this.id]);
      if (this.client !== client || this.closed) return;
      this.counter++;
      this.listening = true;
    } catch {
      this.lost(client);
    }
  }

  private received(client: pg.Client, payload: string): void {
    if (payload.startsWith(SYNC)) {
      client.query('select pg_notify($1, $2)', [KEY_LOOKUP_CHANNEL, `${ACK}${payload.slice(SYNC.length)}:${this.id}`]).catch(() => this.lost(client));
    } else if (payload.startsWith(ACK)) {
      const [marker, listener] = payload.slice(ACK.length).split(':');
      const sync = this.waiting.get(marker!);
      if (sync?.pending.delete(listener!) && sync.pending.size === 0) sync.done();
    } else if (payload === this.schema) this.counter++;
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.listening = false;
    this.client = undefined;
    void client.end().catch(() => undefined);
    if (!this.closed) this.retry = setTimeout(() => (this.started = this.listen()), RECONNECT_MS).unref();
  }
}
