import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

interface LockedPackage {
  version?: string;
  engines?: { node?: string };
}

const root = new URL('../../', import.meta.url);
const manifest = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8')) as {
  packages: Record<string, LockedPackage>;
};

/**
 * `engines.node` is a promise to whoever installs the project: every Node version it admits must be admitted by every
 * locked package, or `npm ci` prints EBADENGINE there (cookie@2 once demanded Node 22 under a `>=20.18` promise).
 */
describe('supported Node.js versions', () => {
  it('every locked package accepts every Node version the project declares', () => {
    const declared = manifest.engines.node;
    const narrower = Object.entries(lock.packages)
      .filter(([path, pkg]) => path !== '' && pkg.engines?.node !== undefined)
      .filter(([, pkg]) => !semver.subset(declared, pkg.engines?.node ?? '*'))
      .map(([path, pkg]) => `${path}@${pkg.version} wants node ${pkg.engines?.node}`);
    expect(narrower).toEqual([]);
  });

  it('the Node version running the tests is one the project declares', () => {
    expect(semver.satisfies(process.version, manifest.engines.node)).toBe(true);
  });
});
