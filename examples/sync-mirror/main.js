import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient } from '@crm/sdk';
import { createMirror } from './mirror.js';

// CRM_BASE_URL, CRM_API_KEY (leads:read accounts:read deals:read), STATE_FILE (default mirror-state.json).
const file = process.env.STATE_FILE ?? 'mirror-state.json';
const client = createClient({ baseUrl: process.env.CRM_BASE_URL ?? 'http://127.0.0.1:3000', apiKey: process.env.CRM_API_KEY });
const save = async (state) => {
  writeFileSync(`${file}.tmp`, JSON.stringify(state));
  renameSync(`${file}.tmp`, file);
};
const mirror = createMirror({ client, save, ...(existsSync(file) && { state: JSON.parse(readFileSync(file, 'utf8')) }) });

if (mirror.state.cursor === null) {
  await mirror.load();
  const { leads, accounts, deals } = mirror.state.items;
  console.log(`loaded ${Object.keys(leads).length} leads, ${Object.keys(accounts).length} accounts, ${Object.keys(deals).length} deals`);
}
for (;;) {
  const applied = await mirror.follow();
  if (applied > 0) console.log(`applied ${applied} changes`);
  await sleep(5_000);
}
