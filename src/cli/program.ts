import { Command } from 'commander';
import { loadConfig, loadDatabaseConfig } from '../config.js';
import { openDatabase } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { registerImportCommands } from './import.commands.js';
import { registerDealCommands } from './deals.commands.js';
import { registerObjectCommands } from './objects.commands.js';
import { registerAdminCommands } from './admin.commands.js';
import { registerOrgCommands } from './orgs.commands.js';
import { registerWebhookCommands } from './webhooks.commands.js';
import { startWorker } from '../worker.js';
import { registerMcpCommand } from './mcp.commands.js';
import { registerOpsCommands } from './ops.commands.js';
import { registerReencryptCommand } from './reencrypt.commands.js';
import { registerPrivacyCommands } from './privacy.commands.js';
import { registerTrashCommands } from './trash.commands.js';
import { bareAction, requireExistingDatabase } from './run.js';

/** The whole `crm` command tree, built without running anything (the docs test walks it against the README). */
export function buildProgram(): Command {
  const program = new Command('crm')
    .description('CRM public API: server, worker and administration')
    .option('--json', 'machine-readable output');

  program
    .command('migrate')
    .description('Apply pending database migrations')
    .action(async () => {
      const config = loadConfig(process.env);
      const database = openDatabase(config.database);
      try {
        const result = await migrateToLatest(database);
        const applied = (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
        console.log(program.opts().json ? JSON.stringify({ applied }) : applied.length ? `Applied ${applied.join(', ')}` : 'Up to date');
      } finally {
        await database.close();
      }
    });

  program
    .command('serve')
    .description('Start the API server (dispatcher and scheduler in-process unless DISPATCHER=off)')
    .action(async () => {
      // Loaded on demand: the HTTP stack is most of the import time, and other commands never need it.
      const { startServer } = await import('../server.js');
      await startServer(loadConfig(process.env));
    });

  program
    .command('worker')
    .description('Run the webhook dispatcher and reminder scheduler without the API (scale-out: start the API instances with DISPATCHER=off)')
    .action(bareAction(async () => {
      // A worker beside a SQLite server works on the server's file: it must not create an empty one elsewhere.
      requireExistingDatabase(loadDatabaseConfig(process.env));
      await startWorker(loadConfig(process.env));
    }));

  registerOrgCommands(program);
  registerImportCommands(program);
  registerDealCommands(program);
  registerObjectCommands(program);
  registerAdminCommands(program);
  registerWebhookCommands(program);
  registerMcpCommand(program);
  registerOpsCommands(program);
  registerReencryptCommand(program);
  registerPrivacyCommands(program);
  registerTrashCommands(program);
  return program;
}
