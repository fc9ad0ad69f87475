// The platform as an MCP server, wired: the account's tools over the agents, pipelines and
// knowledge modules' services, and the HTTP plugin of POST /mcp for app.ts to register.
import type { Logger } from 'pino';
import type { FeaturePlugin } from '../../http/feature-plugin.js';
import type { RateLimiter } from '../accounts/rate-limiter.js';
import type { AgentsModule } from '../agents/module.js';
import type { FeatureName } from '../health/feature-catalog.js';
import type { KnowledgeService } from '../knowledge/knowledge-service.js';
import type { PipelinesModule } from '../pipelines/module.js';
import { mcpPlugin } from './mcp.routes.js';
import { PlatformTools } from './platform-tools.js';

export interface McpModuleDependencies {
  readonly agents: AgentsModule;
  readonly pipelines: PipelinesModule;
  readonly knowledge: KnowledgeService;
  readonly features: Readonly<Record<FeatureName, boolean>>;
  /** The service's version, told to clients in the MCP handshake. */
  readonly version: string;
  readonly logger: Logger;
  /** The keys' and accounts' rate limits, which count every message of a batch. */
  readonly rateLimiter: RateLimiter;
}

export interface McpModule {
  readonly tools: PlatformTools;
  readonly plugin: FeaturePlugin;
  close(): Promise<void>;
}

export function createMcpModule(dependencies: McpModuleDependencies): McpModule {
  const { agents, pipelines } = dependencies;
  const tools = new PlatformTools({
    agents: agents.service,
    catalog: agents.catalog,
    executor: agents.executor,
    pipelines: pipelines.pipelines,
    runner: pipelines.runner,
    knowledge: dependencies.knowledge,
    features: dependencies.features,
    logger: dependencies.logger,
  });
  return {
    tools,
    plugin: mcpPlugin({
      tools,
      info: { name: 'conversational-ai-platform', version: dependencies.version },
      rateLimiter: dependencies.rateLimiter,
    }),
    // Each request's server and transport are closed with its response; nothing else is held.
    close: () => Promise.resolve(),
  };
}
