// The tools module, wired: the one tool registry (tool-registry.ts) over the outside tool sources
// (MCP servers and OpenAPI-described APIs: one connection pool and tool-list cache per process) and
// the knowledge bases, and the checks of a call's arguments. It is below the executions, agents and
// pipelines modules: those it offers as tools give it their parts once they are built.
import type { Logger } from 'pino';
import type { AppConfig } from '../../config/config.js';
import type { Resolver } from '../../net/fetch-target.js';
import type { TextPool } from '../../text-pool/text-pool.js';
import { toolArguments, type ToolArguments } from './tool-arguments.js';
import type { KnowledgeTools } from './tool-parts.js';
import { ToolRegistry } from './tool-registry.js';
import { ToolSources } from './tool-sources.js';

export { ToolEntrySchema } from './tool-entries.js';

export interface ToolsModuleDependencies {
  readonly config: Pick<AppConfig, 'tools' | 'secrets' | 'serviceName' | 'version' | 'features'>;
  /** The text threads, where large answers of MCP servers are parsed and reduced. */
  readonly text: TextPool;
  /** knowledge_search, for a ToolAgent and for /mcp. */
  readonly knowledge: KnowledgeTools;
  readonly logger: Logger;
  /** Host-name resolution (tests inject one); the system's by default. */
  readonly resolve?: Resolver | undefined;
}

export interface ToolsModule {
  readonly registry: ToolRegistry;
  /** The checks of a call's arguments (`tools.max_argument_bytes`), the approvals' too. */
  readonly arguments: ToolArguments;
  /** Closes the tool sources' pooled connections (service shutdown). */
  close(): Promise<void>;
}

export function createToolsModule(dependencies: ToolsModuleDependencies): ToolsModule {
  const { config } = dependencies;
  const sources = new ToolSources({
    tools: config.tools,
    text: dependencies.text,
    secrets: config.secrets,
    clientInfo: { name: config.serviceName, version: config.version },
    ...(dependencies.resolve === undefined ? {} : { resolve: dependencies.resolve }),
  });
  const checks = toolArguments(config.tools.maxArgumentBytes);
  return {
    registry: new ToolRegistry({
      sources,
      knowledge: dependencies.knowledge,
      arguments: checks,
      features: config.features,
      logger: dependencies.logger,
    }),
    arguments: checks,
    close: () => sources.close(),
  };
}
