import { parseArgs } from 'node:util';
import { runLeadSearch } from './leads-search.js';
import { runRecordsSearchBench } from './records-search.js';
import { runListsBench } from './lists.js';
import { runThroughput } from './throughput.js';
import { runPostgresThroughput } from './throughput-postgres.js';
import { runWebhookBench } from './webhooks.js';
import { runImportBench } from './import.js';
import { runMetricsOverhead } from './metrics-overhead.js';
import { runScaleOut } from './scale-out.js';
import { runObjectsBench } from './objects.js';
import { runErasureBench } from './erasure.js';
import { runFeedBench } from './feed.js';
import { runBatchBench, runBatchServerBench } from './batch.js';
import { runCustomFieldsBench } from './custom-fields.js';
import { runWalVolumeBench } from './wal-volume.js';

/**
 * `npm run bench [-- --only throughput,search,records,objects,import,webhooks,metrics,scale-out,erasure,feed,batch,wal,lists,custom-fields] [--rows N]
 * [--record-rows N] [--wal-leads N] [--seconds S] [--rounds R] [--postgres URL] [--redis URL]`: prints markdown tables; every
 * ratio is measured in this run against a bare node:http server on the same machine (throughput: the median
 * of R interleaved rounds). Not part of `npm test`. scale-out needs --postgres (an admin URL: it creates and
 * drops its own database) and Redis; with --postgres, throughput has a second table on PostgreSQL + Redis.
 */
const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    rows: { type: 'string', default: '1000000' },
    'record-rows': { type: 'string', default: '500000' },
    'wal-leads': { type: 'string', default: '100000' },
    seconds: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '3' },
    postgres: { type: 'string' },
    redis: { type: 'string', default: 'redis://127.0.0.1:6379' },
  },
});
const want = (section: string) => values.only === undefined || values.only.split(',').includes(section);

console.log(`# npm run bench — ${new Date().toISOString()}, Node ${process.version}`);
if (want('throughput')) {
  const run = { seconds: Number(values.seconds), rounds: Number(values.rounds) };
  await runThroughput(run);
  if (values.postgres) await runPostgresThroughput({ ...run, pgUrl: values.postgres, redisUrl: values.redis });
}
if (want('metrics')) await runMetricsOverhead({ seconds: Math.min(Number(values.seconds), 3), rounds: 3 });
if (want('search')) {
  await runLeadSearch({ rows: Number(values.rows), dialect: 'sqlite' });
  if (values.postgres) await runLeadSearch({ rows: Number(values.rows), dialect: 'postgres', pgUrl: values.postgres });
}
if (want('records')) {
  await runRecordsSearchBench({ dialect: 'sqlite', rows: Number(values['record-rows']), runs: 40 });
  if (values.postgres) await runRecordsSearchBench({ dialect: 'postgres', rows: Number(values['record-rows']), runs: 40, url: values.postgres });
}
if (want('lists')) {
  const sizes = { leads: Number(values.rows), records: Number(values['record-rows']), runs: 100 };
  await runListsBench({ dialect: 'sqlite', ...sizes });
  if (values.postgres) await runListsBench({ dialect: 'postgres', ...sizes, pgUrl: values.postgres });
}
if (want('objects')) await runObjectsBench({ seconds: Number(values.seconds) });
if (want('import')) await runImportBench({ rows: 100_000, runs: 3 });
if (want('erasure')) {
  await runErasureBench({ dialect: 'sqlite' });
  if (values.postgres) await runErasureBench({ dialect: 'postgres', pgUrl: values.postgres });
}
if (want('feed')) {
  await runFeedBench({ dialect: 'sqlite' });
  if (values.postgres) await runFeedBench({ dialect: 'postgres', pgUrl: values.postgres });
}
if (want('batch')) {
  await runBatchBench({ dialect: 'sqlite', seconds: Number(values.seconds) });
  await runBatchServerBench({ seconds: Number(values.seconds) });
  if (values.postgres) await runBatchBench({ dialect: 'postgres', pgUrl: values.postgres, seconds: Number(values.seconds) });
}
if (want('wal')) await runWalVolumeBench({ leads: Number(values['wal-leads']) });
if (want('custom-fields')) await runCustomFieldsBench({ seconds: Number(values.seconds), rounds: Number(values.rounds), rows: Number(values.rows), runs: 100 });
if (want('scale-out') && values.postgres) await runScaleOut({ pgUrl: values.postgres, redisUrl: values.redis, seconds: Number(values.seconds) });
if (want('webhooks')) {
  console.log('\n## Webhook delivery (SQLite, in-process dispatcher, local receiver)\n');
  console.log('```json\n' + JSON.stringify(await runWebhookBench(), null, 2) + '\n```');
}
