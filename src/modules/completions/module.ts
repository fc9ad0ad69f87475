// The completions module, wired: OpenAI's dialect of the service (Chat Completions over the chat
// module's turns, Embeddings over the catalog's embedding models), as HTTP plugins for app.ts.
import type { CredentialWatch } from '../../auth/credential-watch.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import type { ChatService } from '../chat/chat-service.js';
import type { RoutingService } from '../routing/routing-service.js';
import { completionsPlugin, type CompletionsPlugin } from './completions.routes.js';
import { embeddingsPlugin, type EmbeddingsPlugin } from './embeddings.routes.js';

export interface CompletionsModuleDependencies {
  /** The chat module's service: a completion is a chat turn, stored or stateless. */
  readonly chat: ChatService;
  readonly models: ModelRegistry;
  /** `model: "auto"` and routing policies (the routing module's service). */
  readonly routing: Pick<RoutingService, 'resolveChatModel'>;
  /** Ends a stream whose key is revoked or expires. */
  readonly credentialWatch: CredentialWatch;
  /** The chat routes' body limit (images as data URLs), and the setting that raises it. */
  readonly bodyLimit: { readonly bytes: number; readonly setting: string };
}

export interface CompletionsModule {
  /** POST /chat/completions and /v1/chat/completions. */
  readonly plugin: CompletionsPlugin;
  /** POST /embeddings and /v1/embeddings. */
  readonly embeddingsPlugin: EmbeddingsPlugin;
  close(): Promise<void>;
}

export function createCompletionsModule(
  dependencies: CompletionsModuleDependencies,
): CompletionsModule {
  const { chat, models, routing, credentialWatch, bodyLimit } = dependencies;
  return {
    plugin: completionsPlugin({ chat, routing, credentialWatch, bodyLimit }),
    embeddingsPlugin: embeddingsPlugin(models),
    // A translation holds nothing between requests.
    close: () => Promise.resolve(),
  };
}
