import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SDK = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * What `npm publish` would ship, as npm itself lists it: `npm pack --dry-run` runs the package's `prepack` (a clean
 * build) and names every file of the tarball without writing one.
 */
function packedFiles(): Set<string> {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json'], { cwd: SDK, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const [pack] = JSON.parse(out) as { files: { path: string }[] }[];
  return new Set(pack!.files.map((f) => f.path));
}

describe('the published @crm/sdk package', () => {
  it('is built before it is packed, and every source map points at a file it ships', { timeout: 180_000 }, () => {
    const files = packedFiles();
    const manifest = JSON.parse(readFileSync(join(SDK, 'package.json'), 'utf8')) as { exports: { '.': Record<string, string> } };
    for (const target of Object.values(manifest.exports['.'])) expect(files, target).toContain(posix.normalize(target));

    const maps = [...files].filter((f) => f.endsWith('.map'));
    expect(maps.length).toBeGreaterThan(0);
    const unshipped = maps.flatMap((map) => {
      const { sources } = JSON.parse(readFileSync(join(SDK, map), 'utf8')) as { sources: string[] };
      return sources.map((s) => posix.join(posix.dirname(map), s)).filter((s) => !files.has(s)).map((s) => `${map} → ${s}`);
    });
    expect(unshipped).toEqual([]);
  });
});
