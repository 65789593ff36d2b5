/**
 * Clients writing as fast as they can against a server that may vanish at any moment: every answer that
 * came back 2xx is an acknowledged write the server must keep; a request that got no answer is "unknown"
 * (it may or may not have committed). Each client owns one deal and moves it through the stages.
 */
export interface Acked {
  leads: { id: string; name: string }[];
  accounts: { id: string; name: string }[];
  records: { id: string; name: string }[];
  /** Per deal: stages acknowledged in order, and stages sent since the last acknowledgement (fate unknown). */
  deals: Map<string, { acked: string[]; unknown: string[] }>;
  /** Creates that got no answer: retried later with the same Idempotency-Key. */
  unknownCreates: { path: string; key: string; body: Record<string, unknown> }[];
  requests: number;
  failures: number;
}

const STAGES = ['qualification', 'proposal', 'negotiation'];

/** Each client writes in turn: leads (5 in 10), an account, a record of `object`, and stage moves of its deal (3 in 10). */
export function startWriteLoad(opts: { baseUrl: string; key: string; clients: number; deals: string[]; object: string }): { acked: Acked; stop(): Promise<void> } {
  const acked: Acked = { leads: [], accounts: [], records: [], deals: new Map(opts.deals.map((d) => [d, { acked: ['qualification'], unknown: [] }])), unknownCreates: [], requests: 0, failures: 0 };
  const headers = { authorization: `Bearer ${opts.key}`, 'content-type': 'application/json' };
  let running = true;
  let seq = 0;

  /** The answer; null when the request may have reached the server but no answer came back; 'down' when it never got there. */
  async function send(method: string, path: string, body: unknown, extra: Record<string, string> = {}): Promise<{ status: number; body: any } | null | 'down'> {
    try {
      const res = await fetch(`${opts.baseUrl}/api/public/v1${path}`, { method, headers: { ...headers, ...extra }, body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) });
      acked.requests += 1;
      return { status: res.status, body: await res.json() };
    } catch (err) {
      if ((err as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED') {
        await new Promise((r) => setTimeout(r, 50));
        return 'down';
      }
      acked.requests += 1;
      acked.failures += 1;
      return null;
    }
  }

  async function client(n: number): Promise<void> {
    const deal = opts.deals[n % opts.deals.length]!;
    while (running) {
      const i = ++seq;
      const r = i % 10;
      if (r < 5 || r >= 8) {
        const kind = r < 5 ? 'lead' : r === 8 ? 'account' : 'record';
        const path = kind === 'record' ? `/objects/${opts.object}/records` : `/${kind}s`;
        const name = `${kind} ${n}-${i}`;
        const body = kind === 'record' ? { title: name, contact: `${kind}.${n}.${i}@example.com` } : { name, email: `${kind}.${n}.${i}@example.com` };
        const key = `crash-${kind}-${n}-${i}`;
        const res = await send('POST', path, body, { 'idempotency-key': key });
        if (res === null) acked.unknownCreates.push({ path, key, body });
        else if (res !== 'down' && res.status === 201) acked[`${kind}s`].push({ id: res.body.data[kind].id, name });
      } else {
        const state = acked.deals.get(deal)!;
        const current = state.acked[state.acked.length - 1]!;
        const stage = STAGES[(STAGES.indexOf(current) + 1 + (i % 2)) % STAGES.length]!;
        state.unknown.push(stage);
        const res = await send('PATCH', `/deals/${deal}`, { stage });
        if (res === 'down') state.unknown.pop();
        else if (res !== null && res.status === 200) {
          state.acked.push(stage);
          state.unknown = [];
        }
      }
    }
  }

  const clients = Array.from({ length: opts.clients }, (_, n) => client(n));
  return {
    acked,
    async stop() {
      running = false;
      await Promise.all(clients);
    },
  };
}
