import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { databaseEnv } from '../helpers/processes.js';
import { runCli, runCliOnTerminal } from '../helpers/cli.js';
import { addConsoleUser, attemptSignIn, get, signIn } from '../helpers/admin.js';

let t: TestApp;
let a: Seeded;
let env: Record<string, string>;

beforeAll(async () => {
  t = await buildTestApp();
  a = await seedOrg(t.ctx);
  env = { ...databaseEnv(t), LOG_LEVEL: 'silent' };
});
afterAll(() => t.close());

const lastJson = (out: string) => JSON.parse(out.trim().split('\n').at(-1)!);
const signedIn = async (cookie: string) => (await get(t.app, '/admin', cookie)).status === 200;

/** `crm user set-password`: the way back in for an operator whose console users are all locked out. */
describe('crm user list and set-password', () => {
  it('lists the users; reads the password from standard input, ends every session of the user, and reports with --json', async () => {
    const user = await addConsoleUser(t.ctx, a.orgId, { admin: true });
    const sessions = [await signIn(t.app, user), await signIn(t.app, user)];
    const other = await addConsoleUser(t.ctx, a.orgId);
    const [listed, ok, short, unknown] = await Promise.all([
      runCli(['--json', 'user', 'list', '--org', a.orgId], env),
      runCli(['--json', 'user', 'set-password', '--user', user.id], env, { input: 'piped in password\nignored second line\n' }),
      runCli(['--json', 'user', 'set-password', '--user', other.id], env, { input: 'short\n' }),
      runCli(['--json', 'user', 'set-password', '--user', '0123456789abcdef01234567'], env, { input: 'long enough password\n' }),
    ]);
    expect(lastJson(listed.stdout)).toEqual(expect.arrayContaining([
      expect.objectContaining({ id: user.id, email: user.email, isAdmin: true, canSignIn: true }),
      expect.objectContaining({ id: other.id, isAdmin: false }),
    ]));
    expect(ok.code, ok.stderr).toBe(0);
    expect(lastJson(ok.stdout)).toEqual({ id: user.id, sessionsEnded: 2 });
    expect(ok.stdout + ok.stderr).not.toContain('piped in password');
    for (const s of sessions) expect(await signedIn(s.cookie)).toBe(false);
    expect((await attemptSignIn(t.app, user.email, user.password)).status).toBe(401);
    expect((await attemptSignIn(t.app, user.email, 'piped in password')).status).toBe(303);

    expect(short.code).toBe(1);
    expect(lastJson(short.stdout)).toMatchObject({ status: false, code: 'VALIDATION_FAILED', errors: [{ field: 'newPassword', code: 'too_short' }] });
    expect((await attemptSignIn(t.app, other.email, other.password)).status).toBe(303);
    expect(unknown.code).toBe(1);
    expect(lastJson(unknown.stdout)).toMatchObject({ status: false, code: 'NOT_FOUND' });
  }, 120_000);

  it('user create --password reads the password from standard input, never from the command line', async () => {
    const email = `piped-${Date.now()}@example.com`;
    const created = await runCli(['--json', 'user', 'create', '--org', a.orgId, '--email', email, '--name', 'Piped', '--password'], env, { input: 'a piped first password\n' });
    expect(created.code, created.stdout + created.stderr).toBe(0);
    expect(created.stdout + created.stderr).not.toContain('a piped first password');
    expect((await attemptSignIn(t.app, email, 'a piped first password')).status).toBe(303);
    const short = await runCli(['--json', 'user', 'create', '--org', a.orgId, '--email', `short-${email}`, '--name', 'Short', '--password'], env, { input: 'short\n' });
    expect(short.code).toBe(1);
    expect(lastJson(short.stdout)).toMatchObject({ status: false, code: 'VALIDATION_FAILED' });
    const asArgument = await runCli(['user', 'create', '--org', a.orgId, '--email', `arg-${email}`, '--name', 'Arg', '--password', 'on the command line'], env);
    expect(asArgument.code).not.toBe(0);
  }, 120_000);

  it('on a terminal, asks twice without showing what is typed, and refuses a mismatch', async () => {
    const user = await addConsoleUser(t.ctx, a.orgId);
    const args = ['user', 'set-password', '--user', user.id];
    const mismatch = await runCliOnTerminal(args, env, [
      { prompt: 'New password: ', type: 'typed at a terminal\r' },
      { prompt: 'Repeat the new password: ', type: 'typed at a terminal, wrongly\r' },
    ]);
    expect(mismatch.code).toBe(1);
    expect(mismatch.stdout).toContain('confirmPassword: does not match the new password');
    // Both lines typed ahead at the first prompt, with a typo erased by Backspace.
    const done = await runCliOnTerminal(args, env, [{ prompt: 'New password: ', type: 'typed at a terminal\rtyped at a terminak\u007fl\r' }]);
    expect(done.code, done.stdout).toBe(0);
    expect(done.stdout).toContain(`Set the console password of user ${user.id}; ended 0 console session(s)`);
    for (const shown of [mismatch.stdout, done.stdout]) expect(shown).not.toContain('typed at a terminal');
    expect((await attemptSignIn(t.app, user.email, 'typed at a terminal')).status).toBe(303);
  }, 120_000);
});
