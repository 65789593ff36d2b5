import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../../src/errors.js';

describe('docs/errors.md', () => {
  it('documents every error code with its HTTP status', () => {
    const doc = readFileSync('docs/errors.md', 'utf8');
    for (const [code, status] of Object.entries(ERROR_STATUS)) {
      expect(doc, code).toMatch(new RegExp(`\\| ${status} \\| \`${code}\` \\|`));
    }
  });
});
