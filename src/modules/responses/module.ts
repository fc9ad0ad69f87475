// The responses module, wired: OpenAI's Responses API over the chat module's turns, its stored
// responses (one conversation per chain, in the conversations module), as an HTTP plugin for
// app.ts.
import type { Kysely } from 'kysely';
import type { CredentialWatch } from '../../auth/credential-watch.js';
import type { DatabaseSchema } from '../../storage/schema.js';
import type { ChatService } from '../chat/chat-service.js';
import type { ConversationService } from '../conversations/conversation-service.js';
import type { RoutingService } from '../routing/routing-service.js';
import { ResponseService } from './response-service.js';
import { responsesPlugin, type ResponsesPlugin } from './responses.routes.js';
import { ResponsesRepository } from './responses.repository.js';

export interface ResponsesModuleDependencies {
  readonly db: Kysely<DatabaseSchema>;
  /** The chat module's service: a response is a chat turn, stored or stateless. */
  readonly chat: ChatService;
  /** Where a chain's turns are stored, and read back for a fork. */
  readonly conversations: ConversationService;
  /** `model: "auto"` and routing policies (the routing module's service). */
  readonly routing: Pick<RoutingService, 'resolveChatModel'>;
  /** Ends a stream whose key is revoked or expires. */
  readonly credentialWatch: CredentialWatch;
  /** The chat routes' body limit (images as data URLs), and the setting that raises it. */
  readonly bodyLimit: { readonly bytes: number; readonly setting: string };
  readonly now: () => number;
}

export interface ResponsesModule {
  readonly service: ResponseService;
  /** POST /v1/responses, GET and DELETE /v1/responses/{id}, GET …/input_items. */
  readonly plugin: ResponsesPlugin;
  close(): Promise<void>;
}

export function createResponsesModule(dependencies: ResponsesModuleDependencies): ResponsesModule {
  const { db, chat, conversations, routing, credentialWatch, bodyLimit, now } = dependencies;
  const service = new ResponseService({
    chat,
    conversations,
    routing,
    responses: new ResponsesRepository(db),
    now,
  });
  return {
    service,
    plugin: responsesPlugin({ responses: service, chat, credentialWatch, bodyLimit }),
    // Storage is the app's; a response holds nothing between requests.
    close: () => Promise.resolve(),
  };
}
