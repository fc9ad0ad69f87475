// POST /v1/responses, GET and DELETE /v1/responses/{id} and GET /v1/responses/{id}/input_items:
// OpenAI's Responses API over every chat model of the catalog, so that OpenAI's SDKs and the
// Agents SDK work against the platform unchanged. The translation is responses-dialect.ts, the
// chains and storage response-service.ts; this is the HTTP side, as one Fastify plugin.
import type { FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import type { CredentialWatch } from '../../auth/credential-watch.js';
import { access } from '../../auth/scopes.js';
import { featurePlugin, type FeaturePlugin } from '../../http/feature-plugin.js';
import {
  clientGoneSignal,
  guardAnswer,
  logStreamFailure,
  openGuarded,
  sendEventStream,
} from '../../http/streaming.js';
import { principalOf, type App } from '../../http/types.js';
import { Readable } from 'node:stream';
import type { ChatService, ChatStreamEvent } from '../chat/chat-service.js';
import { responseCallOf, withClientParams, type ResponseRequestBody } from './responses-dialect.js';
import type { PreparedResponse, ResponseService } from './response-service.js';
import {
  CreateResponseSchema,
  DeletedResponseSchema,
  InputItemsQuery,
  ItemListSchema,
  ResponseIdParams,
  ResponseSchema,
} from './responses.schemas.js';

export type ResponsesPlugin = FeaturePlugin;

export interface ResponsesRoutesDependencies {
  readonly responses: ResponseService;
  /** Streams are opened here, under the key's watch; whole answers go through the service. */
  readonly chat: Pick<ChatService, 'openStream'>;
  /** Ends a stream whose key is revoked or expires. */
  readonly credentialWatch: CredentialWatch;
  /** The chat routes' body limit (images as data URLs), and the setting that raises it. */
  readonly bodyLimit: { readonly bytes: number; readonly setting: string };
}

export function responsesPlugin(dependencies: ResponsesRoutesDependencies): ResponsesPlugin {
  return featurePlugin('responses', (app) => {
    responsesRoutes(app, dependencies);
  });
}

/** Server-Sent Events as OpenAI sends the Responses stream: `event: <type>` and its JSON. */
function namedEvents(events: AsyncIterable<Record<string, unknown>>): Readable {
  async function* frames(): AsyncGenerator<string> {
    for await (const event of events) {
      yield `event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`;
    }
  }
  return Readable.from(frames(), { objectMode: false });
}

/** A JSON body written as it is (a stored response is returned byte for byte). */
function sendJson(reply: FastifyReply, text: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(text);
}

const readDescription =
  "Needs `chat:read` as well as `chat:write`. Another account's response, an unknown id, a response created with `store: false` or deleted answers 404.";

function responsesRoutes(app: App, dependencies: ResponsesRoutesDependencies): void {
  const { responses } = dependencies;
  app.post(
    '/v1/responses',
    {
      config: {
        access: access.scopes('chat:write'),
        bodyLimitSetting: dependencies.bodyLimit.setting,
      },
      bodyLimit: dependencies.bodyLimit.bytes,
      schema: {
        operationId: 'createResponse',
        tags: ['Chat'],
        summary: 'Create a model response (OpenAI Responses API)',
        description:
          "OpenAI's Responses API over any chat model of the catalog. `input` (text, or message, `function_call` and `function_call_output` items; `input_image` as an https or data URL), `instructions`, function `tools` (OpenAI's built-in tool types answer 400 naming `tools[i].type`), `tool_choice`, `parallel_tool_calls`, `text.format` (`json_schema`, `json_object`), `temperature`, `top_p`, `max_output_tokens`, `reasoning.effort`, `metadata`, `user`. Stored unless `store: false`: each chain of `previous_response_id`s shares one conversation (`conversation.id` in the answer, listed by /v1/conversations); `conversation` continues a conversation of the account. Streamed (`stream: true`) as OpenAI's event sequence, `event:` lines and a `sequence_number` on each. Other fields are ignored. See the Responses API section of docs.",
        body: CreateResponseSchema,
        response: {
          200: {
            description: 'A Response, or its events when streaming.',
            content: {
              'application/json': { schema: ResponseSchema },
              'text/event-stream': { schema: Type.String() },
            },
          },
        },
      },
    },
    async (request, reply) => {
      await create(dependencies, request.body as ResponseRequestBody, request, reply);
      return reply;
    },
  );

  app.get(
    '/v1/responses/:response_id',
    {
      config: { access: access.scopes('chat:write', 'chat:read') },
      schema: {
        operationId: 'getResponse',
        tags: ['Chat'],
        summary: 'Get a stored response',
        description: `The Response as it was returned. ${readDescription}`,
        params: ResponseIdParams,
        response: { 200: ResponseSchema },
      },
    },
    async (request, reply) =>
      sendJson(
        reply,
        await responses.get(principalOf(request).accountId, request.params.response_id),
      ),
  );

  app.delete(
    '/v1/responses/:response_id',
    {
      config: { access: access.scopes('chat:write', 'chat:read') },
      schema: {
        operationId: 'deleteResponse',
        tags: ['Chat'],
        summary: 'Delete a stored response',
        description: `It can no longer be read or continued with \`previous_response_id\`; its turns stay in its conversation until that is deleted. ${readDescription}`,
        params: ResponseIdParams,
        response: { 200: DeletedResponseSchema },
      },
    },
    async (request) => responses.delete(principalOf(request).accountId, request.params.response_id),
  );

  app.get(
    '/v1/responses/:response_id/input_items',
    {
      config: { access: access.scopes('chat:write', 'chat:read') },
      schema: {
        operationId: 'listResponseInputItems',
        tags: ['Chat'],
        summary: "List a stored response's input items",
        description: `The items of its \`input\` (not \`instructions\`), each with an id, newest first unless \`order=asc\`; \`after\` an item's id pages on. ${readDescription}`,
        params: ResponseIdParams,
        querystring: InputItemsQuery,
        response: { 200: ItemListSchema },
      },
    },
    async (request, reply) => {
      const { after, limit, order } = request.query;
      const page = await responses.inputItems(
        principalOf(request).accountId,
        request.params.response_id,
        { after, limit, order },
      );
      return sendJson(reply, JSON.stringify(page));
    },
  );
}

/** One response: prepared (routed, its chain read), then answered whole or streamed. */
async function create(
  { responses, chat, credentialWatch }: ResponsesRoutesDependencies,
  body: ResponseRequestBody,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const principal = principalOf(request);
  const call = responseCallOf(body);
  // A stream also ends when its key is revoked or expires (an error event, then response.failed).
  const guard = call.stream ? guardAnswer(reply, credentialWatch, principal) : null;
  const signal = guard?.signal ?? clientGoneSignal(reply);
  const prepared: PreparedResponse = await responses.prepare(
    call,
    { accountId: principal.accountId, apiKeyId: principal.keyId, routing: principal },
    signal,
  );
  if (guard === null) {
    const response = await responses.complete(prepared);
    void sendJson(reply, JSON.stringify(response));
    return;
  }
  let events: AsyncGenerator<ChatStreamEvent>;
  try {
    events = await openGuarded<ChatStreamEvent>(
      () => chat.openStream(prepared.chatRequest),
      guard,
      (error) => ({ type: 'error', error }),
    );
  } catch (error) {
    throw withClientParams(error, prepared.paths);
  }
  void sendEventStream(
    reply,
    namedEvents(
      responses.events(prepared, events, (error) => {
        logStreamFailure(request.log, error);
      }),
    ),
  );
}
