// POST /v1/responses, GET and DELETE /v1/responses/{id} and GET /v1/responses/{id}/input_items:
// OpenAI's Responses API over every chat model of the catalog, so that OpenAI's SDKs and the
// Agents SDK work against the platform unchanged. POST is answered by the chat module's turn
// handler in the Responses dialect (responses-dialect.ts), the chains and storage are
// response-service.ts; this is the HTTP side, as one Fastify plugin.
import type { FastifyReply } from 'fastify';
import Type from 'typebox';
import { access } from '../../auth/scopes.js';
import { featurePlugin, type FeaturePlugin } from '../../http/feature-plugin.js';
import { principalOf, type App } from '../../http/types.js';
import type { TurnDialect } from '../chat/turn-dialect.js';
import type { TurnHandler } from '../chat/turn-handler.routes.js';
import type { ResponseService, ResponseTurn } from './response-service.js';
import type { ResponseRequestBody } from './responses-request.js';
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
  /** Stored responses: read, deleted, their input items listed. */
  readonly responses: ResponseService;
  /** The chat module's turn handler, which answers POST /v1/responses in `dialect`. */
  readonly turns: TurnHandler;
  readonly dialect: TurnDialect<ResponseRequestBody, ResponseTurn>;
  /** The chat routes' body limit (images as data URLs), and the setting that raises it. */
  readonly bodyLimit: { readonly bytes: number; readonly setting: string };
}

export function responsesPlugin(dependencies: ResponsesRoutesDependencies): ResponsesPlugin {
  return featurePlugin('responses', (app) => {
    responsesRoutes(app, dependencies);
  });
}

/** A JSON body written as it is (a stored response is returned byte for byte). */
function sendJson(reply: FastifyReply, text: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(text);
}

const readDescription =
  "Needs `chat:read` as well as `chat:write`. Another account's response, an unknown id, a response created with `store: false` or deleted answers 404.";

function responsesRoutes(app: App, dependencies: ResponsesRoutesDependencies): void {
  createRoute(app, dependencies);
  storedRoutes(app, dependencies.responses);
}

/** POST /v1/responses: a turn of the chat module's turn handler, in the Responses dialect. */
function createRoute(app: App, dependencies: ResponsesRoutesDependencies): void {
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
      const { turns, dialect } = dependencies;
      await turns.answer(dialect, request.body as ResponseRequestBody, request, reply);
      return reply;
    },
  );
}

/** The stored responses: read, deleted, their input items listed. */
function storedRoutes(app: App, responses: ResponseService): void {
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
