// POST /mcp: the platform as an MCP server (streamable HTTP, stateless). Each request gets its own
// server and transport for the calling key, answered as JSON; access control, the rate limit and
// the request log apply before it as on every route, and every further message of a batch is
// counted against the rate limit before any of them runs. GET and DELETE (a server-sent stream,
// ending a session) are not offered: the app's 405 answers them, in the contract's error body.
import { access } from '../../auth/scopes.js';
import { AppError } from '../../errors/app-error.js';
import { countBatchMessages } from '../../http/access-control.js';
import type { RateLimiter } from '../accounts/rate-limiter.js';
import { featurePlugin, type FeaturePlugin } from '../../http/feature-plugin.js';
import { clientGoneSignal } from '../../http/streaming.js';
import { principalOf } from '../../http/types.js';
import type * as StreamableHttpModule from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type * as McpRequestModule from './mcp-request.js';
import type * as McpServerModule from './mcp-server.js';
import type { McpServerInfo } from './mcp-server.js';
import { maxBatchMessages, McpRequestBody, McpResponseBody } from './mcp.schemas.js';
import type { ToolRegistry } from '../tools/tool-registry.js';

export interface McpRoutesDependencies {
  readonly tools: Pick<ToolRegistry, 'offered' | 'callOffered'>;
  readonly info: McpServerInfo;
  /** Counts a batch's further messages as requests (the HTTP request is counted on its own). */
  readonly rateLimiter: RateLimiter;
}

const description = [
  "The platform as a Model Context Protocol server (streamable HTTP transport, stateless: no `Mcp-Session-Id`, every request stands alone). The key's account's agents and pipelines marked `expose_as_tool` are its tools, and `knowledge_search` over the account's knowledge bases when it has any (see docs/mcp.md).",
  'Listing the tools needs the scope of this route; calling an agent or pipeline tool needs `agents:write` (as POST /v1/agents/{agent_id}/execute and POST /v1/pipelines/{pipeline_id}/execute do), `knowledge_search` needs `agents:read`. A call whose scope the key lacks, whose arguments do not match the tool’s inputSchema, or whose run fails answers a tool result with `isError: true` saying why; every agent or pipeline call is a recorded execution (`execution_id`, GET /v1/executions/{execution_id}). The tools of a switched-off feature (`agent_orchestration`, `semantic_search`) are not offered.',
  `A batch (a JSON array of messages, at most ${maxBatchMessages}) counts every message against the key's and its account's rate limits as one request, before any of them runs; a batch larger than what is left answers 429 \`rate_limit_exceeded\` and nothing of it runs. The rate-limit headers of the answer count the whole batch.`,
  'Answers are JSON (`application/json`), never an event stream. GET and DELETE answer 405: the server sends no messages of its own and keeps no session.',
].join('\n\n');

/**
 * The MCP server and its transport (the official SDK), loaded with the first request: the SDK and
 * its schemas take ~25 MiB that a service nobody calls over MCP never needs.
 */
function loadServer() {
  return (serverModules ??= Promise.all([
    import('./mcp-request.js'),
    import('./mcp-server.js'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
  ]));
}
let serverModules:
  | Promise<[typeof McpRequestModule, typeof McpServerModule, typeof StreamableHttpModule]>
  | undefined;

export function mcpPlugin(dependencies: McpRoutesDependencies): FeaturePlugin {
  const { tools, info, rateLimiter } = dependencies;
  return featurePlugin('mcp', (app) => {
    app.post(
      '/mcp',
      {
        config: { access: access.scopes('agents:read') },
        schema: {
          operationId: 'mcp',
          tags: ['MCP'],
          summary: 'MCP server (JSON-RPC)',
          description,
          body: McpRequestBody,
          response: {
            200: McpResponseBody,
            202: { type: 'null', description: 'A notification or response was accepted.' },
          },
        },
      },
      async (request, reply) => {
        const [{ checkMcpRequest }, { platformMcpServer }, { StreamableHTTPServerTransport }] =
          await loadServer();
        checkMcpRequest(request.headers, request.body);
        const { body } = request;
        await countBatchMessages(
          rateLimiter,
          request,
          reply,
          Array.isArray(body) ? body.length : 1,
        );
        const principal = principalOf(request);
        const server = platformMcpServer(
          tools,
          {
            accountId: principal.accountId,
            keyId: principal.keyId,
            scopes: principal.scopes,
            signal: clientGoneSignal(reply),
          },
          info,
        );
        const transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: true,
        });
        // Both live exactly as long as the request's response.
        reply.raw.once('close', () => {
          void transport.close().catch(() => undefined);
          void server.close().catch(() => undefined);
        });
        await server.connect(transport);
        // From here the transport writes the response; onResponse hooks (the request log, the
        // metrics) still run when it ends. The headers set so far (request id, rate limit, CORS)
        // go with it: they are on Fastify's reply, not yet on the raw response.
        for (const [name, value] of Object.entries(reply.getHeaders())) {
          if (value !== undefined) reply.raw.setHeader(name, value);
        }
        reply.hijack();
        try {
          await transport.handleRequest(request.raw, reply.raw, request.body);
        } catch (error) {
          // The transport answers its own failures; this is for one it did not see coming.
          request.log.error({ err: error }, 'MCP request failed');
          if (reply.raw.headersSent) {
            reply.raw.end();
            return;
          }
          const failure = new AppError('internal_error', 'The MCP request failed; it was logged.');
          reply.raw.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
          reply.raw.end(JSON.stringify(failure.toBody()));
        }
      },
    );
  });
}
