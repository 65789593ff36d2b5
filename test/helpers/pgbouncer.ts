import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { freePort } from './server-process.js';

export const PGBOUNCER = '/usr/sbin/pgbouncer';
export const hasPgBouncer = existsSync(PGBOUNCER);

/**
 * A PgBouncer of its own in front of the PostgreSQL of `url`, in `pool_mode=transaction` with few server
 * connections, so that consecutive statements of one client do land on different server connections.
 * Returns `url` rewritten to go through it. As root it runs as the postgres user (it refuses to run as root).
 */
export async function startPgBouncer(url: string): Promise<{ url: string; stop(): Promise<void> }> {
  const target = new URL(url);
  const dir = mkdtempSync(join(tmpdir(), 'crm-pgbouncer-'));
  const port = await freePort();
  writeFileSync(join(dir, 'users.txt'), `"${decodeURIComponent(target.username)}" "${decodeURIComponent(target.password)}"\n`);
  writeFileSync(join(dir, 'pgbouncer.ini'), [
    '[databases]',
    `* = host=${target.hostname} port=${target.port || 5432}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${join(dir, 'users.txt')}`,
    'pool_mode = transaction',
    'default_pool_size = 3',
    'max_client_conn = 100',
    'ignore_startup_parameters = extra_float_digits',
  ].join('\n'));
  chmodSync(dir, 0o755);
  const asRoot = process.getuid?.() === 0;
  const child: ChildProcess = spawn(PGBOUNCER, [...(asRoot ? ['-u', 'postgres'] : []), join(dir, 'pgbouncer.ini')], { stdio: 'ignore' });
  const end = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited with ${child.exitCode}`);
    const listening = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => resolve(socket.end() !== undefined)).on('error', () => resolve(false));
    });
    if (listening) break;
    if (Date.now() > end) throw new Error('pgbouncer did not start listening');
    await new Promise((r) => setTimeout(r, 50));
  }
  const through = new URL(url);
  through.host = `127.0.0.1:${port}`;
  return {
    url: through.toString(),
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
