import type { McpTool } from '../mcp.tool.js';
import { leadTools } from './leads.tools.js';

/** Every tool the MCP server offers; a resource adds its `*.tools.ts` list here. */
export const MCP_TOOLS: readonly McpTool[] = [...leadTools];
