import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GENERATED_TYPES_PATH, generateSdkTypes } from '../../scripts/generate-sdk-types.js';

describe('SDK generated types', () => {
  it('are up to date with the OpenAPI document (run `npm run generate:sdk` after changing a route or schema)', async () => {
    const fresh = await generateSdkTypes();
    const committed = readFileSync(GENERATED_TYPES_PATH, 'utf8');
    expect(fresh.length).toBeGreaterThan(1000);
    expect(committed === fresh, 'packages/sdk/src/generated/openapi.ts is stale: run `npm run generate:sdk`').toBe(true);
  });
});
