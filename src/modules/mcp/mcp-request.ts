// What POST /mcp checks before the SDK's transport reads the request: everything the transport
// would refuse in a JSON-RPC error of its own (Accept, Content-Type, a malformed message, a batch
// with an initialize, an unknown protocol version) is refused here instead, in the contract's
// error body like every other 4xx of the API. What passes, the transport accepts.
import {
  isInitializeRequest,
  JSONRPCMessageSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import { AppError, InvalidParameterError } from '../../errors/app-error.js';

export interface McpRequestHeaders {
  readonly accept?: string | undefined;
  readonly 'content-type'?: string | undefined;
  readonly 'mcp-protocol-version'?: string | string[] | undefined;
}

const jsonType = /^application\/json\s*(;|$)/i;

export function checkMcpRequest(headers: McpRequestHeaders, body: unknown): void {
  const accept = headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
    throw new InvalidParameterError(
      'accept',
      "MCP's streamable HTTP transport needs 'Accept: application/json, text/event-stream' (answers are JSON).",
    );
  }
  if (!jsonType.test(headers['content-type'] ?? '')) {
    throw new AppError(
      'unsupported_media_type',
      "The body of POST /mcp is JSON: send 'Content-Type: application/json'.",
    );
  }
  const messages = Array.isArray(body) ? body : [body];
  messages.forEach((message, index) => {
    if (!JSONRPCMessageSchema.safeParse(message).success) {
      throw new InvalidParameterError(
        Array.isArray(body) ? `body[${index}]` : 'body',
        'Not a JSON-RPC 2.0 message (a request, a notification or a response) of the Model Context Protocol.',
      );
    }
  });
  if (messages.some((message) => isInitializeRequest(message))) {
    if (messages.length > 1) {
      throw new InvalidParameterError('body', 'An initialize request must be sent alone.');
    }
    return;
  }
  const version = headers['mcp-protocol-version'];
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(String(version))) {
    throw new InvalidParameterError(
      'mcp-protocol-version',
      `Unsupported MCP protocol version '${String(version).slice(0, 50)}' (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}).`,
    );
  }
}
