import { randomBytes } from 'node:crypto';
import { analyzeDatabase, backendCpu, benchDatabase, cpuOfCommand, cpuSecondsOf } from './lib.js';
import { runThroughput } from './throughput.js';

/**
 * The throughput table on PostgreSQL + Redis, one `crm serve` in its default configuration (the scale-out
 * deployment's unit), on a database of its own: each scenario next to bare node:http, and the CPU per request
 * of the API process, of the PostgreSQL backends of that database and of Redis (the whole server: it is
 * shared), as the scale-out table reports them.
 */
export async function runPostgresThroughput(opts: { pgUrl: string; redisUrl: string; seconds: number; rounds: number }): Promise<void> {
  const database = await benchDatabase(opts.pgUrl, 'crm_bench_throughput');
  const total = (cpu: Map<number, number>) => [...cpu.values()].reduce((n, s) => n + s, 0);
  try {
    await runThroughput({
      seconds: opts.seconds,
      rounds: opts.rounds,
      postgres: {
        env: { DATABASE_URL: database.url, REDIS_URL: opts.redisUrl, ENCRYPTION_KEY: randomBytes(32).toString('base64') },
        // Backends come and go with the pool: each one's CPU counts from zero when it first appears.
        cpu: async (server) => [cpuSecondsOf(server.pid!), total(await backendCpu(database.admin, database.name)), cpuOfCommand('redis-server')],
        seeded: () => analyzeDatabase(database.url),
      },
    });
  } finally {
    await database.drop();
  }
}
