// The tools module, wired: what other modules reach of it. The tool sources (MCP servers and
// OpenAPI-described APIs: their entry schemas, saving, showing and opening a run's tools) are
// here; the built-in tools and the tool loop are added beside them.
import type { AppConfig } from '../../config/config.js';
import type { Resolver } from '../../net/fetch-target.js';
import type { TextPool } from '../../text-pool/text-pool.js';
import { ToolSources } from './tool-sources.js';

export type { ToolBox, ToolOutcome, ToolSpec } from './tool.js';
export { toolArguments, type ToolArguments } from './tool-arguments.js';
export {
  externalToolSourceTypes,
  IdempotentSchema,
  McpToolSourceSchema,
  OpenApiToolSourceSchema,
  RequiresApprovalSchema,
  shownToolSources,
  ToolEntryNameSchema,
  ToolSources,
  type McpToolSource,
  type OpenApiToolSource,
  type OpenedToolSources,
  type UnavailableToolSource,
} from './tool-sources.js';

/** The tool sources of this service (one per process: its connection pool and tool-list cache). */
export function createToolSources(
  config: Pick<AppConfig, 'tools' | 'secrets' | 'serviceName' | 'version'>,
  options: { text: TextPool; resolve?: Resolver },
): ToolSources {
  return new ToolSources({
    tools: config.tools,
    text: options.text,
    secrets: config.secrets,
    clientInfo: { name: config.serviceName, version: config.version },
    ...(options.resolve === undefined ? {} : { resolve: options.resolve }),
  });
}
