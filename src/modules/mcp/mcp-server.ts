// One MCP server for one request of one key (the platform's POST /mcp is stateless): the SDK's
// McpServer with the tools of the key's account. Its tools are JSON Schemas built from what is
// stored (agent types' parameters, pipelines' input schemas), not zod shapes, so tools/list and
// tools/call are answered by handlers on the underlying protocol server, the SDK's way for tools
// it does not define itself.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { OfferedTool, ToolCaller } from '../tools/offered-tools.js';
import type { ToolRegistry } from '../tools/tool-registry.js';

/**
 * The SDK's server makes a new Ajv instance per server unless given one; it uses it only to check
 * answers to elicitation requests, which this server never sends. One for the process instead of
 * one per request (profiled: Ajv's set-up was a tenth of a tools/list request's CPU).
 */
const sharedValidator = new AjvJsonSchemaValidator();

export interface McpServerInfo {
  readonly name: string;
  readonly version: string;
}

const instructions =
  "Tools of one account of the platform: its agents and pipelines marked expose_as_tool, and knowledge_search over its knowledge bases when it has any. Each agent or pipeline call is a recorded execution (execution_id in the answer); a failed run answers isError with the run's answer.";

/** A server for `caller`; connect it to the request's transport, and close both when it ends. */
export function platformMcpServer(
  tools: Pick<ToolRegistry, 'offered' | 'callOffered'>,
  caller: ToolCaller,
  info: McpServerInfo,
): McpServer {
  const mcp = new McpServer(
    { name: info.name, version: info.version },
    { instructions, jsonSchemaValidator: sharedValidator },
  );
  mcp.server.registerCapabilities({ tools: {} });
  // One request may list and call (a batch); the account's tools are read once for it.
  let listed: Promise<OfferedTool[]> | undefined;
  const accountTools = () => (listed ??= tools.offered(caller.accountId));

  mcp.server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: (await accountTools()).map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema as { type: 'object'; [key: string]: unknown },
    })),
  }));

  mcp.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name } = request.params;
    const tool = (await accountTools()).find((candidate) => candidate.name === name);
    // An unknown tool is a protocol error (the spec's), not a failed call.
    if (tool === undefined) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: '${name.slice(0, 100)}'.`);
    }
    return tools.callOffered(tool, request.params.arguments, {
      ...caller,
      signal: AbortSignal.any([caller.signal, extra.signal]),
    });
  });
  return mcp;
}
