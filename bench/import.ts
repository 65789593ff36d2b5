import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nameAt, prng } from './names.js';

/** `crm import leads` of a generated CSV (every row with e-mail and phone) into a fresh SQLite file, as a user runs it. */
export async function runImportBench(opts: { rows: number }): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'crm-bench-import-'));
  try {
    const rand = prng(3);
    const lines = ['name,email,phoneNumber,source,sourceCampaign,company'];
    for (let i = 0; i < opts.rows; i++) lines.push(`${nameAt(i, rand)},person${i}@example.com,+1415${5_000_000 + i},WEBSITE,spring,"Acme, Inc."`);
    const file = join(dir, 'leads.csv');
    writeFileSync(file, lines.join('\n'));
    const env = { ...process.env, DATABASE_URL: join(dir, 'crm.db'), ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') };
    const org = JSON.parse(spawnSync(process.execPath, ['bin/crm.js', '--json', 'org', 'create', '--name', 'Import bench'], { env, encoding: 'utf8' }).stdout).id as string;
    const run = spawnSync(process.execPath, ['bin/crm.js', '--json', 'import', 'leads', file, '--org', org], { env, encoding: 'utf8' });
    const report = JSON.parse(run.stdout) as { imported: number; rows: number; seconds: number };
    console.log(`\n## crm import leads (SQLite, ${opts.rows.toLocaleString('en')} rows with e-mail and phone)\n`);
    console.log(`imported ${report.imported} of ${report.rows} in ${report.seconds.toFixed(2)} s: **${Math.round(report.imported / report.seconds)} rows/s** (bar: ≥ 20,000)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
