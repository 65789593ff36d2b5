import type { McpTool } from '../mcp.tool.js';
import { accountTools } from './accounts.tools.js';
import { dealTools } from './deals.tools.js';
import { leadTools } from './leads.tools.js';
import { noteTaskTools } from './notes-tasks.tools.js';
import { recordTools } from './records.tools.js';
import { userTools } from './users.tools.js';

/** Every tool the MCP server offers; a resource adds its `*.tools.ts` list here. */
export const MCP_TOOLS: readonly McpTool[] = [...leadTools, ...accountTools, ...dealTools, ...recordTools, ...userTools, ...noteTaskTools];
