import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BatchedOutput } from '../../src/http/batched-output.js';

describe('batched log output', () => {
  let dir: string;
  let file: string;
  let fd: number;
  const written = () => readFileSync(file, 'utf8');
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'crm-log-'));
    file = join(dir, 'out.log');
    fd = openSync(file, 'w');
  });
  afterEach(() => {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes the lines of a turn together, in order, after the turn', async () => {
    const out = new BatchedOutput(fd);
    out.write('a\n');
    out.write('b\n');
    expect(written()).toBe('');
    await nextTurn();
    expect(written()).toBe('a\nb\n');
    out.write('c é ✓\n');
    await nextTurn();
    expect(written()).toBe('a\nb\nc é ✓\n');
    out.close();
  });

  it('writes what is buffered on close, and every later line at once', () => {
    const out = new BatchedOutput(fd);
    out.write('pending\n');
    out.close();
    expect(written()).toBe('pending\n');
    out.write('shutting down\n');
    expect(written()).toBe('pending\nshutting down\n');
  });
});
