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

/** The most messages one batch may hold; each of them counts against the rate limit as a request. */
export const maxBatchMessages = 50;

export const McpRequestBody = Type.Union(
  [
    JsonRpcMessage,
    Type.Array(JsonRpcMessage, {
      minItems: 1,
      maxItems: maxBatchMessages,
      description: `A batch: at most ${maxBatchMessages} messages, each counted against the key's and its account's rate limits as one request, before any of them runs (a batch that does not fit in what is left answers 429 and nothing of it runs).`,
    }),
  ],
  {
    description:
      'A JSON-RPC 2.0 message of the Model Context Protocol (streamable HTTP transport, protocol 2025-11-25 and earlier versions the SDK accepts), or a batch of them. Send `Accept: application/json, text/event-stream` and `Content-Type: application/json`.',
  },
);

export const McpResponseBody = Type.Record(Type.String(), Type.Unknown(), {
  description:
    'The JSON-RPC response: `result` (for tools/call a CallToolResult: `content` with the answer as JSON text, `isError: true` when the run failed, a scope is missing or the arguments are invalid) or `error` (an unknown tool, a malformed request).',
});
