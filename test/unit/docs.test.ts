import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../../src/errors.js';
import { EnvSchema } from '../../src/config.js';
import { buildProgram } from '../../src/cli/program.js';

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
