import { parseArgs } from 'node:util';
import { runLeadSearch } from './leads-search.js';
import { runThroughput } from './throughput.js';
import { runMetricsOverhead } from './metrics-overhead.js';

/**
 * `npm run bench [-- --only throughput|search|metrics] [--rows N] [--seconds S] [--postgres URL]`: prints markdown
 * tables; every ratio is measured in this run against a bare node:http server on the same machine.
 */
const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    rows: { type: 'string', default: '1000000' },
    seconds: { type: 'string', default: '8' },
    postgres: { type: 'string' },
  },
});
const want = (section: string) => values.only === undefined || values.only.split(',').includes(section);

console.log(`# npm run bench — ${new Date().toISOString()}, Node ${process.version}`);
if (want('throughput')) await runThroughput({ seconds: Number(values.seconds) });
if (want('metrics')) await runMetricsOverhead({ seconds: Math.min(Number(values.seconds), 3), rounds: 3 });
if (want('search')) {
  await runLeadSearch({ rows: Number(values.rows), dialect: 'sqlite' });
  if (values.postgres) await runLeadSearch({ rows: Number(values.rows), dialect: 'postgres', pgUrl: values.postgres });
}
