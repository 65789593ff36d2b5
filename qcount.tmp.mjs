import Database from 'better-sqlite3';
const proto = Object.getPrototypeOf(new Database(':memory:').prepare('select 1'));
const stats = new Map();
for (const m of ['all', 'run', 'get', 'iterate']) {
  const orig = proto[m];
  proto[m] = function (...a) { const s = process.hrtime.bigint(); try { return orig.apply(this, a); } finally { const k = this.source.slice(0, 90); const e = stats.get(k) ?? { n: 0, t: 0n }; e.n++; e.t += process.hrtime.bigint() - s; stats.set(k, e); } };
}
const { loadConfig } = await import('./dist/src/config.js');
const { startServer } = await import('./dist/src/server.js');
const srv = await startServer(loadConfig(process.env));
process.on('SIGUSR2', () => { for (const [k, v] of [...stats].sort((a, b) => Number(b[1].t - a[1].t)).slice(0, 15)) console.error(v.n, (Number(v.t) / v.n / 1000).toFixed(1) + 'µs', k); stats.clear(); });
