import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { createApiKey, createOrganization, createUser, requireOrganization, revokeApiKey } from '../modules/orgs/orgs.service.js';
import { listUserSummaries } from '../modules/orgs/users.service.js';
import { listKeys } from '../modules/orgs/keys.store.js';
import { listUsers } from '../modules/orgs/users.store.js';
import { listOrganizations } from '../modules/orgs/orgs.store.js';
import { setAssignmentRules } from '../modules/orgs/rules.service.js';
import { updateOrganizationSettings } from '../modules/orgs/settings.service.js';
import { confirmedPassword, setPasswordAsOperator } from '../admin/auth/passwords.service.js';
import { deactivateUser, reactivateUser, userIdByEmail } from '../admin/auth/activation.service.js';
import { readNewPassword } from './password-input.js';
import { action, parseExpiresIn } from './run.js';

export function registerOrgCommands(program: Command): void {
  const org = program.command('org').description('Organizations');
  org
    .command('create')
    .description('Create an organization')
    .requiredOption('--name <name>', 'display name')
    .option('--timezone <zone>', 'IANA time zone for overdue checks and reminders', 'UTC')
    .action(action(async (ctx, out, opts: { name: string; timezone: string }) => {
      const created = await createOrganization(ctx, { name: opts.name, timezone: opts.timezone });
      out.print({ id: created.id }, `Created organization ${created.id} (${created.name}, ${created.timezone})`);
    }, { createsDatabase: true }));
  org
    .command('list')
    .description('List every organization (the ids other commands take as --org)')
    .action(action(async (ctx, out) => {
      const organizations = await listOrganizations(ctx.database.db);
      const human = organizations.map((o) => `${o.id}  ${o.name}  ${o.timezone}  created ${o.createdAt}`).join('\n');
      out.print(organizations, human || 'No organizations');
    }));
  org
    .command('update')
    .description('Rename an organization or change its time zone (re-plans pending reminders)')
    .requiredOption('--org <id>', 'organization id')
    .option('--name <name>', 'new display name')
    .option('--timezone <zone>', 'new IANA time zone')
    .action(action(async (ctx, out, opts: { org: string; name?: string; timezone?: string }) => {
      const updated = await updateOrganizationSettings(ctx, opts.org, { name: opts.name, timezone: opts.timezone });
      out.print(updated, `Updated organization ${updated.id} (${updated.name}, ${updated.timezone})`);
    }));

  const user = program.command('user').description('Users');
  user
    .command('create')
    .description('Create a user of an organization')
    .requiredOption('--org <id>', 'organization id')
    .requiredOption('--email <email>', 'sign-in e-mail')
    .requiredOption('--name <name>', 'display name')
    .option('--password', 'also set a console password, read from standard input like set-password (asked twice, not shown, on a terminal)', false)
    .option('--admin', 'may change configuration in the console', false)
    .action(action(async (ctx, out, opts: { org: string; email: string; name: string; password: boolean; admin: boolean }) => {
      const password = opts.password ? confirmedPassword(await readNewPassword()) : undefined;
      const created = await createUser(ctx, { organizationId: opts.org, email: opts.email, name: opts.name, password, admin: opts.admin });
      out.print({ id: created.id }, `Created user ${created.id}`);
    }));
  user
    .command('list')
    .description('List the users of an organization (ids for set-password)')
    .requiredOption('--org <id>', 'organization id')
    .action(action(async (ctx, out, opts: { org: string }) => {
      await requireOrganization(ctx, opts.org);
      const users = await listUserSummaries(ctx, opts.org);
      const human = users.map((u) => `${u.id}  ${u.name} <${u.email}>  ${u.isAdmin ? 'admin' : 'member'}  ${u.canSignIn ? 'console sign-in' : 'no sign-in'}${u.active ? '' : '  deactivated'}`).join('\n');
      out.print(users, human || 'No users');
    }));
  user
    .command('set-password')
    .description('Set a user\'s console password, read from standard input (asked twice, not shown, on a terminal); signs the user out of every console session')
    .requiredOption('--user <id>', 'user id')
    .action(action(async (ctx, out, opts: { user: string }) => {
      const signedOut = await setPasswordAsOperator(ctx, opts.user, await readNewPassword());
      out.print({ id: opts.user, sessionsEnded: signedOut }, `Set the console password of user ${opts.user}; ended ${signedOut} console session(s)`);
    }));
  user
    .command('deactivate')
    .description('Deactivate a user: ends their console sessions, stops sign-in and their API keys, and they can no longer be given work (refused for the last active administrator)')
    .requiredOption('--org <id>', 'organization id')
    .requiredOption('--email <email>', 'the user\'s sign-in e-mail')
    .action(action(async (ctx, out, opts: { org: string; email: string }) => {
      const id = await userIdByEmail(ctx, opts.org, opts.email);
      const signedOut = await deactivateUser(ctx, opts.org, id, null);
      out.print({ id, active: false, sessionsEnded: signedOut }, `Deactivated user ${id}; ended ${signedOut} console session(s)`);
    }));
  user
    .command('reactivate')
    .description('Reactivate a deactivated user: sign-in (with their password) and their API keys work again')
    .requiredOption('--org <id>', 'organization id')
    .requiredOption('--email <email>', 'the user\'s sign-in e-mail')
    .action(action(async (ctx, out, opts: { org: string; email: string }) => {
      const id = await userIdByEmail(ctx, opts.org, opts.email);
      await reactivateUser(ctx, opts.org, id);
      out.print({ id, active: true }, `Reactivated user ${id}`);
    }));

  const key = program.command('key').description('API keys');
  key
    .command('create')
    .description('Create an API key (shown once)')
    .requiredOption('--org <id>', 'organization id')
    .option('--user <id>', 'user the key acts for')
    .requiredOption('--scopes <list>', 'comma-separated scopes, e.g. leads:read,leads:write')
    .option('--name <name>', 'label shown in listings')
    .option('--expires-in <duration>', 'e.g. 90d, 12h')
    .option('--rate-limit <n>', 'requests per minute for this key (default RATE_LIMIT_PER_MINUTE)')
    .action(action(async (ctx, out, opts: { org: string; user?: string; scopes: string; name?: string; expiresIn?: string; rateLimit?: string }) => {
      const created = await createApiKey(ctx, {
        organizationId: opts.org,
        userId: opts.user ?? null,
        name: opts.name,
        scopes: opts.scopes.split(',').map((s) => s.trim()).filter(Boolean),
        expiresAt: opts.expiresIn ? parseExpiresIn(opts.expiresIn, ctx.clock.now()) : null,
        rateLimitPerMinute: opts.rateLimit ? Number(opts.rateLimit) : null,
      });
      out.print({ id: created.id, key: created.key }, `Created key ${created.id}\n${created.key}\nStore it now: it is not shown again.`);
    }));
  key
    .command('list')
    .description('List the API keys of an organization')
    .requiredOption('--org <id>', 'organization id')
    .action(action(async (ctx, out, opts: { org: string }) => {
      const [keys, users] = await Promise.all([listKeys(ctx.database.db, opts.org), listUsers(ctx.database.db, opts.org)]);
      const inactive = new Set(users.filter((u) => u.deactivatedAt !== null).map((u) => u.id));
      const state = (k: (typeof keys)[number]) =>
        k.revokedAt ? 'revoked' : k.userId !== null && inactive.has(k.userId) ? 'owner deactivated' : k.expiresAt ? `expires ${k.expiresAt}` : 'active';
      const human = keys
        .map((k) => `${k.id}  ${k.prefix}…  ${k.name}  [${k.scopes.join(',')}]  ${state(k)}  last used ${k.lastUsedAt ?? 'never'}`)
        .join('\n');
      out.print(keys, human || 'No keys');
    }));
  key
    .command('revoke')
    .description('Revoke an API key; effective on its next request')
    .argument('<id>', 'key id')
    .action(action(async (ctx, out, id: string) => {
      await revokeApiKey(ctx, id);
      out.print({ id, revoked: true }, `Revoked key ${id}`);
    }));

  program
    .command('rules')
    .description('Lead assignment rules')
    .command('set')
    .description('Replace the assignment rules of an organization from a JSON file')
    .requiredOption('--org <id>', 'organization id')
    .requiredOption('--file <path>', 'rules.json: {"rules": [{"id", "match": {source?, sourceCampaign?}, "assign": {...}}]}')
    .action(action(async (ctx, out, opts: { org: string; file: string }) => {
      const rules = await setAssignmentRules(ctx.database, opts.org, JSON.parse(readFileSync(opts.file, 'utf8')), ctx.clock.now());
      out.print({ rules }, `Saved ${rules.length} assignment rule(s)`);
    }));
}
