// The completions module, wired: OpenAI's dialect of the service (Chat Completions over the chat
// module's turns, Embeddings over the catalog's embedding models), as HTTP plugins for app.ts.
import type { ModelRegistry } from '../../models/model-registry.js';
import type { TurnHandler } from '../chat/turn-handler.routes.js';
import { completionsPlugin, type CompletionsPlugin } from './completions.routes.js';
import { embeddingsPlugin, type EmbeddingsPlugin } from './embeddings.routes.js';

export interface CompletionsModuleDependencies {
  /** The chat module's turn handler: a completion is a chat turn, stored or stateless. */
  readonly turns: TurnHandler;
  readonly models: ModelRegistry;
  /** The chat routes' body limit (images as data URLs), and the setting that raises it. */
  readonly bodyLimit: { readonly bytes: number; readonly setting: string };
}

export interface CompletionsModule {
  /** POST /chat/completions and /v1/chat/completions. */
  readonly plugin: CompletionsPlugin;
  /** POST /embeddings and /v1/embeddings. */
  readonly embeddingsPlugin: EmbeddingsPlugin;
}

export function createCompletionsModule(
  dependencies: CompletionsModuleDependencies,
): CompletionsModule {
  const { turns, models, bodyLimit } = dependencies;
  // A translation holds nothing between requests: nothing to close.
  return {
    plugin: completionsPlugin({ turns, bodyLimit }),
    embeddingsPlugin: embeddingsPlugin(models),
  };
}
