// The HTTP shapes of POST /mcp: a JSON-RPC 2.0 message of the Model Context Protocol (a request
// such as initialize, tools/list or tools/call, or a notification), and its answer.
import Type from 'typebox';

const JsonRpcMessage = Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    id: Type.Optional(
      Type.Union(
        [
          Type.String({ maxLength: 200 }),
          Type.Number({ minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }),
          Type.Null(),
        ],
        {
          description: 'Absent on notifications (answered 202 with no body).',
        },
      ),
    ),
    method: Type.Optional(
      Type.String({
        maxLength: 200,
        description: 'initialize, notifications/initialized, ping, tools/list, tools/call, …',
      }),
    ),
    params: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    result: Type.Optional(Type.Unknown()),
    error: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: true },
);

export const McpRequestBody = Type.Union(
  [JsonRpcMessage, Type.Array(JsonRpcMessage, { minItems: 1, maxItems: 100 })],
  {
    description:
      'A JSON-RPC 2.0 message of the Model Context Protocol (streamable HTTP transport, protocol 2025-11-25 and earlier versions the SDK accepts). Send `Accept: application/json, text/event-stream` and `Content-Type: application/json`.',
  },
);

export const McpResponseBody = Type.Record(Type.String(), Type.Unknown(), {
  description:
    'The JSON-RPC response: `result` (for tools/call a CallToolResult: `content` with the answer as JSON text, `isError: true` when the run failed, a scope is missing or the arguments are invalid) or `error` (an unknown tool, a malformed request).',
});
