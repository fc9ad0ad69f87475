// The messages module, wired: Anthropic's dialect of the service (the Messages API over the chat
// module's turns, or passed through to the catalog's Anthropic models), as an HTTP plugin for
// app.ts.
import type { ModelDefinition, SecretSource } from '../../config/config.js';
import type { ModelCallObserver } from '../../models/model-call-observer.js';
import type { UsageMeter } from '../../models/metering.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import { AnthropicPassthrough } from '../../models/providers/anthropic-passthrough.js';
import { UpstreamError } from '../../models/spec.js';
import type { TurnHandler } from '../chat/turn-handler.routes.js';
import { anthropicMessagesDialect } from './anthropic-messages-dialect.js';
import { messagesPlugin, type MessagesPlugin } from './messages.routes.js';

export interface MessagesModuleDependencies {
  /** The chat module's turn handler: a translated message is a chat turn, stored or stateless. */
  readonly turns: TurnHandler;
  readonly models: ModelRegistry;
  /** Provider keys, read when a pass-through client is first built. */
  readonly secrets: SecretSource;
  /** Told of every passed-through call (the service's metrics), as the registry's models are. */
  readonly observer: ModelCallObserver;
  /** Meters every passed-through call (the usage ledger, budgets), as the registry's models are. */
  readonly meter: UsageMeter;
  /** The chat routes' body limit (images and PDFs as base64): `chat.body_limit_bytes`. */
  readonly bodyLimit: { readonly bytes: number; readonly setting: string };
}

export interface MessagesModule {
  /** POST /v1/messages and /v1/messages/count_tokens. */
  readonly plugin: MessagesPlugin;
}

export function createMessagesModule(dependencies: MessagesModuleDependencies): MessagesModule {
  const { turns, models, secrets, observer, meter, bodyLimit } = dependencies;
  // One client per Anthropic model, built on its first pass-through (its key read then).
  const clients = new Map<string, AnthropicPassthrough>();
  const passthroughOf = (definition: ModelDefinition): AnthropicPassthrough | null => {
    if (definition.provider !== 'anthropic') return null;
    // A model of several deployments goes through the turn handler, which chooses among them.
    if ('deployments' in definition && definition.deployments.length > 0) return null;
    const status = models.status(definition.name);
    if (status !== undefined && !status.available) {
      throw new UpstreamError(
        'model_unavailable',
        `Model '${definition.name}' is not available: ${status.reason ?? 'unknown reason'}`,
      );
    }
    let client = clients.get(definition.name);
    if (client === undefined) {
      const apiKey = definition.apiKeyEnv === null ? undefined : secrets.get(definition.apiKeyEnv);
      client = new AnthropicPassthrough(definition, apiKey, observer, meter);
      clients.set(definition.name, client);
    }
    return client;
  };
  // The pass-through clients hold pooled connections of the shared agents only.
  return {
    plugin: messagesPlugin({
      turns,
      dialect: anthropicMessagesDialect({ models, passthroughOf }),
      models,
      bodyLimit,
    }),
  };
}
