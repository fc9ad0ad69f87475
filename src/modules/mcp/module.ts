// The platform as an MCP server, wired: the account's tools are the tool registry's (its exposed
// agents and pipelines, and knowledge_search), and the HTTP plugin of POST /mcp is for app.ts to
// register.
import type { FeaturePlugin } from '../../http/feature-plugin.js';
import type { RateLimiter } from '../accounts/rate-limiter.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import { mcpPlugin } from './mcp.routes.js';

export interface McpModuleDependencies {
  /** The account's tools, listed and called (the tools module's registry). */
  readonly tools: Pick<ToolRegistry, 'offered' | 'callOffered'>;
  /** The service's version, told to clients in the MCP handshake. */
  readonly version: string;
  /** The keys' and accounts' rate limits, which count every message of a batch. */
  readonly rateLimiter: RateLimiter;
}

export interface McpModule {
  readonly plugin: FeaturePlugin;
}

export function createMcpModule(dependencies: McpModuleDependencies): McpModule {
  // Each request's server and transport are closed with its response; nothing else is held.
  return {
    plugin: mcpPlugin({
      tools: dependencies.tools,
      info: { name: 'conversational-ai-platform', version: dependencies.version },
      rateLimiter: dependencies.rateLimiter,
    }),
  };
}
