import type { Command } from 'commander';
import { VERSION } from '../app.js';
import { AppError } from '../errors.js';
import { serveMcpOverStdio } from '../modules/mcp/mcp.stdio.js';
import { action } from './run.js';

export function registerMcpCommand(program: Command): void {
  program
    .command('mcp')
    .description('Serve the MCP tools over stdin/stdout (for a desktop MCP client), acting as the API key in CRM_API_KEY')
    .action(action(async (ctx) => {
      const apiKey = process.env.CRM_API_KEY;
      if (!apiKey) throw new AppError('UNAUTHORIZED', 'Set CRM_API_KEY to the API key the MCP client acts as (crm key create …)');
      await serveMcpOverStdio(ctx, { apiKey, version: VERSION });
    }));
}
