import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../../src/errors.js';
import { EnvSchema } from '../../src/config.js';
import { buildProgram } from '../../src/cli/program.js';
import { MCP_TOOLS } from '../../src/modules/mcp/tools/index.js';

const readme = readFileSync('README.md', 'utf8');

describe('docs/errors.md', () => {
  it('documents every error code with its HTTP status', () => {
    const doc = readFileSync('docs/errors.md', 'utf8');
    for (const [code, status] of Object.entries(ERROR_STATUS)) {
      expect(doc, code).toMatch(new RegExp(`\\| ${status} \\| \`${code}\` \\|`));
    }
  });
});

/** `crm org list`, `crm webhook create`, …: every command that runs something, by its full name. */
function runnableCommands(command: Command, prefix: string): string[] {
  const name = `${prefix} ${command.name()}`;
  return command.commands.length === 0 ? [name] : command.commands.flatMap((sub) => runnableCommands(sub, name));
}

describe('README', () => {
  it('lists every crm command the CLI registers', () => {
    const program = buildProgram();
    const commands = program.commands.flatMap((c) => runnableCommands(c, program.name()));
    expect(commands.length).toBeGreaterThan(20);
    const missing = commands.filter((c) => !new RegExp(`^(CRM_API_KEY=… )?${c}(\\s|$)`, 'm').test(readme));
    expect(missing).toEqual([]);
  });

  it('documents every environment variable the configuration reads', () => {
    // Named in the first column of the configuration table.
    const missing = Object.keys(EnvSchema.properties).filter((name) => !new RegExp(`^\\|[^|]*\`${name}\`[^|]*\\|`, 'm').test(readme));
    expect(missing).toEqual([]);
  });
});

describe('docs/mcp.md', () => {
  const TIME_RANGES = ['createdAfter', 'createdBefore', 'updatedAfter', 'updatedBefore'];

  it('names every argument of each list and search tool in its row of the tools table', () => {
    const doc = readFileSync('docs/mcp.md', 'utf8');
    const lists = MCP_TOOLS.filter((tool) => /^(list|search)_/.test(tool.name));
    expect(lists.length).toBeGreaterThan(8);
    const missing = lists.flatMap((tool) => {
      const row = doc.split('\n').find((line) => line.startsWith(`| \`${tool.name}\` |`)) ?? '';
      const args = Object.keys((tool.input as { properties?: object }).properties ?? {});
      // "the time ranges" stands for the four bounds, as in docs/sync.md.
      const named = (arg: string) => row.includes(`\`${arg}\``) || (TIME_RANGES.includes(arg) && row.includes('the time ranges'));
      return args.filter((arg) => !named(arg)).map((arg) => `${tool.name}: ${arg}`);
    });
    expect(missing).toEqual([]);
  });
});
