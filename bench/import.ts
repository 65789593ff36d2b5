import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median } from './lib.js';
import { nameAt, prng } from './names.js';

/**
 * `crm import leads` of a generated CSV (every row with e-mail and phone) into a fresh SQLite file, as a user
 * runs it, `runs` times: one import's rate moves by several per cent from run to run on a 2-core machine, so
 * the median is the figure and every run is printed.
 */
export async function runImportBench(opts: { rows: number; runs: number }): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'crm-bench-import-'));
  try {
    const rand = prng(3);
    const lines = ['name,email,phoneNumber,source,sourceCampaign,company'];
    for (let i = 0; i < opts.rows; i++) lines.push(`${nameAt(i, rand)},person${i}@example.com,+1415${5_000_000 + i},WEBSITE,spring,"Acme, Inc."`);
    const file = join(dir, 'leads.csv');
    writeFileSync(file, lines.join('\n'));
    const rates: number[] = [];
    const cpuMicros: number[] = [];
    for (let run = 0; run < opts.runs; run++) {
      const env = { ...process.env, DATABASE_URL: join(dir, `crm-${run}.db`), ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') };
      const org = JSON.parse(spawnSync(process.execPath, ['bin/crm.js', '--json', 'org', 'create', '--name', 'Import bench'], { env, encoding: 'utf8' }).stdout).id as string;
      // GNU time reports the command's CPU seconds (user, system) on stderr: steadier than rows/s on a loaded machine.
      const result = spawnSync('/usr/bin/time', ['-f', '%U %S', process.execPath, 'bin/crm.js', '--json', 'import', 'leads', file, '--org', org], { env, encoding: 'utf8' });
      // The exit code too: the report is printed before the command closes its database.
      if (result.status !== 0) throw new Error(`crm import exited with ${result.status}: ${result.stderr.slice(-500)}`);
      const report = JSON.parse(result.stdout) as { imported: number; rows: number; seconds: number };
      if (report.imported !== opts.rows) throw new Error(`the import bench imported ${report.imported} of ${opts.rows} rows`);
      rates.push(Math.round(report.imported / report.seconds));
      const [user, system] = result.stderr.trim().split('\n').at(-1)!.split(' ').map(Number);
      cpuMicros.push(((user! + system!) * 1e6) / report.imported);
    }
    console.log(`\n## crm import leads (SQLite, ${opts.rows.toLocaleString('en')} rows with e-mail and phone, ${opts.runs} runs into fresh files)\n`);
    console.log(`rows/s by run: ${rates.join(', ')}; median **${median(rates)} rows/s** (bar: ≥ 20,000)`);
    console.log(`CPU µs per row (the whole command: start-up, CSV parsing, workers) by run: ${cpuMicros.map((c) => c.toFixed(0)).join(', ')}; median **${median(cpuMicros).toFixed(0)}**`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
