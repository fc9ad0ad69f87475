// The responses module, wired: OpenAI's Responses API over the chat module's turns, its stored
// responses (one conversation per chain, in the conversations module), as an HTTP plugin for
// app.ts.
import type { Kysely } from 'kysely';
import type { DatabaseSchema } from '../../storage/schema.js';
import type { TurnHandler } from '../chat/turn-handler.routes.js';
import type { ConversationService } from '../conversations/conversation-service.js';
import { ResponseService } from './response-service.js';
import { responsesDialect } from './responses-dialect.js';
import { responsesPlugin, type ResponsesPlugin } from './responses.routes.js';
import { ResponsesRepository } from './responses.repository.js';

export interface ResponsesModuleDependencies {
  readonly db: Kysely<DatabaseSchema>;
  /** The chat module's turn handler: a response is a chat turn, stored or stateless. */
  readonly turns: TurnHandler;
  /** Where a chain's turns are stored, and read back for a fork. */
  readonly conversations: ConversationService;
  /** The chat routes' body limit (images as data URLs), and the setting that raises it. */
  readonly bodyLimit: { readonly bytes: number; readonly setting: string };
  readonly now: () => number;
}

export interface ResponsesModule {
  readonly service: ResponseService;
  /** POST /v1/responses, GET and DELETE /v1/responses/{id}, GET …/input_items. */
  readonly plugin: ResponsesPlugin;
}

export function createResponsesModule(dependencies: ResponsesModuleDependencies): ResponsesModule {
  const { db, turns, conversations, bodyLimit, now } = dependencies;
  const service = new ResponseService({ conversations, responses: new ResponsesRepository(db) });
  // Storage is the app's; a response holds nothing between requests.
  return {
    service,
    plugin: responsesPlugin({
      responses: service,
      turns,
      dialect: responsesDialect(service, now),
      bodyLimit,
    }),
  };
}
