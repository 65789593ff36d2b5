import type { Command } from 'commander';
import { validationFailed } from '../errors.js';
import { inTransaction } from '../db/transaction.js';
import { validateValue } from '../http/validation.js';
import { requireOrganization } from '../modules/orgs/orgs.service.js';
import { CreateWebhookBody, ListWebhooksQuery } from '../modules/webhooks/webhooks.schemas.js';
import { checkWebhookInput, createWebhook, deleteWebhookById, listWebhooks } from '../modules/webhooks/webhooks.service.js';
import { action } from './run.js';

const list = (value: string) => value.split(',').map((s) => s.trim()).filter(Boolean);

export function registerWebhookCommands(program: Command): void {
  const webhook = program.command('webhook').description('Webhook endpoints');
  webhook
    .command('create')
    .description('Register an endpoint; prints its signing secret once')
    .requiredOption('--org <id>', 'organization id')
    .requiredOption('--url <url>', 'https URL receiving the events')
    .requiredOption('--events <list>', 'comma-separated event types, or * for all')
    .option('--description <text>', 'shown in listings')
    .action(action(async (ctx, out, opts: { org: string; url: string; events: string; description?: string }) => {
      const input = { url: opts.url, events: list(opts.events), ...(opts.description !== undefined ? { description: opts.description } : {}) };
      const errors = validateValue(CreateWebhookBody, input, 'body');
      if (errors.length) throw validationFailed(errors);
      const body = input as CreateWebhookBody;
      await requireOrganization(ctx, opts.org);
      await checkWebhookInput(ctx, body);
      const created = await inTransaction(ctx, (trx) => createWebhook(ctx, trx, opts.org, body));
      out.print({ id: created.id, secret: created.secret }, `Created webhook ${created.id}\n${created.secret}\nStore the signing secret now: it is not shown again.`);
    }));
  webhook
    .command('list')
    .description('List the endpoints of an organization')
    .requiredOption('--org <id>', 'organization id')
    .option('--enabled <true|false>', 'only the enabled (true) or disabled (false) endpoints')
    .option('--event-type <type>', 'only the endpoints receiving this event type (by name or with *)')
    .action(action(async (ctx, out, opts: { org: string; enabled?: string; eventType?: string }) => {
      // As in a query string: "true"/"false" are the booleans; anything else is refused by the list's schema, named.
      const enabled = opts.enabled === 'true' ? true : opts.enabled === 'false' ? false : opts.enabled;
      const query = { page: 1, limit: 100, ...(enabled !== undefined && { enabled }), ...(opts.eventType !== undefined && { eventType: opts.eventType }) };
      const errors = validateValue(ListWebhooksQuery, query, 'options');
      if (errors.length) throw validationFailed(errors);
      const { webhooks } = await listWebhooks(ctx, opts.org, query as ListWebhooksQuery);
      const human = webhooks
        .map((w) => `${w.id}  ${w.url}  [${w.events.join(',')}]  ${w.enabled ? 'enabled' : `disabled (${w.disabledReason})`}`)
        .join('\n');
      out.print(webhooks, human || 'No webhooks');
    }));
  webhook
    .command('delete')
    .description('Delete an endpoint and its delivery log')
    .argument('<id>', 'webhook id')
    .action(action(async (ctx, out, id: string) => {
      await deleteWebhookById(ctx, id);
      out.print({ id, deleted: true }, `Deleted webhook ${id}`);
    }));
}
