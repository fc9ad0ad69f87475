// The chat module, wired: one turn of a conversation (stored, or stateless for the OpenAI dialect),
// the turn handler every dialect's route calls, and the HTTP plugins of POST /v1/chat and of the
// model catalog for app.ts to register.
import type { CredentialWatch } from '../../auth/credential-watch.js';
import type { AppConfig } from '../../config/config.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import type { ConversationService } from '../conversations/conversation-service.js';
import type { RoutingService } from '../routing/routing-service.js';
import { ChatService } from './chat-service.js';
import { chatBodyLimitSetting, chatPlugin, type ChatPlugin } from './chat.routes.js';
import { modelsPlugin, type ModelsPlugin } from './models.routes.js';
import { TurnHandler } from './turn-handler.routes.js';

export interface ChatModuleDependencies {
  readonly models: ModelRegistry;
  /** Where turns are stored (the conversations module's service). */
  readonly conversations: ConversationService;
  /** `model: "auto"` and routing policies (the routing module's service). */
  readonly routing: Pick<RoutingService, 'resolveChatModel'>;
  /** Ends a stream whose key is revoked or expires. */
  readonly credentialWatch: CredentialWatch;
  /** The chat routes' limits, and the server's body limit they never go below. */
  readonly config: Pick<AppConfig, 'chat' | 'server'>;
  readonly now: () => number;
}

export interface ChatModule {
  /** One chat turn, streamed or not: /v1/chat, the OpenAI dialect and voice conversations. */
  readonly service: ChatService;
  /**
   * One turn of any dialect (/v1/chat, /chat/completions, /v1/messages, /v1/responses): routing,
   * the key's watch over a stream, the call and the answer, once.
   */
  readonly turns: TurnHandler;
  /** POST /v1/chat. */
  readonly plugin: ChatPlugin;
  /** GET /models, /v1/models and /models/{model}. */
  readonly modelsPlugin: ModelsPlugin;
  /**
   * The chat routes' body limit, for /chat/completions too (registered by the completions
   * module), with the setting its 413 names.
   */
  readonly bodyLimit: { readonly bytes: number; readonly setting: string };
}

export function createChatModule(dependencies: ChatModuleDependencies): ChatModule {
  const { models, conversations, routing, credentialWatch, config, now } = dependencies;
  const service = new ChatService({
    models,
    conversations,
    now,
    maxStoredDataUrlBytes: config.chat.maxStoredDataUrlBytes,
  });
  // A body the server takes everywhere is taken here too.
  const bodyLimitBytes = Math.max(config.chat.bodyLimitBytes, config.server.bodyLimitBytes);
  const turns = new TurnHandler({ chat: service, routing, credentialWatch });
  return {
    service,
    turns,
    plugin: chatPlugin({ turns, bodyLimitBytes }),
    modelsPlugin: modelsPlugin(models),
    // A chat turn holds nothing between requests (nothing to close): models and storage are the
    // service's.
    bodyLimit: { bytes: bodyLimitBytes, setting: chatBodyLimitSetting },
  };
}
