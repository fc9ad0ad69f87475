// Builds the models of remote definitions, reading each key from its environment variable only
// when the model is used: OpenAI and OpenAI-compatible servers (Ollama, vLLM, llama.cpp, LM Studio,
// Groq, Together, Mistral) chat through the lean pass-through client, Anthropic and Google through
// the AI SDK's provider packages; embeddings through the AI SDK for every provider.
import type { EmbeddingModelV3, LanguageModelV3 } from '@ai-sdk/provider';
import type { RemoteModelDefinition, SecretSource } from '../../config/config.js';
import type { BpeTokenCounter } from '../bpe-token-counter.js';
import type { ChatModel, EmbeddingModel } from '../spec.js';
import { AiSdkChatModel } from './ai-sdk-chat-model.js';
import { AiSdkEmbeddingModel } from './ai-sdk-embedding-model.js';
import type { ImageFetcher } from './ai-sdk-target.js';
import { keepAliveFetch } from './keep-alive-fetch.js';
import { OpenAiCompatibleChatModel } from './openai-compatible-chat-model.js';
import type { AiSdkProvider } from './provider-parameters.js';

/** Why a remote model cannot be used now, or null when it can. */
export function remoteUnavailability(
  definition: RemoteModelDefinition,
  secrets: SecretSource,
): string | null {
  if (definition.apiKeyEnv !== null && secrets.get(definition.apiKeyEnv) === undefined) {
    return `The environment variable ${definition.apiKeyEnv} holding the ${definition.provider} API key is not set. Set it and restart the service.`;
  }
  return null;
}

function apiKeyOf(definition: RemoteModelDefinition, secrets: SecretSource): string | undefined {
  return definition.apiKeyEnv === null ? undefined : secrets.get(definition.apiKeyEnv);
}

/** Where the provider is, and the keep-alive fetch every provider is given. */
function baseUrlOption(definition: RemoteModelDefinition): {
  baseURL?: string;
  fetch: typeof fetch;
} {
  return definition.baseUrl === null
    ? { fetch: keepAliveFetch }
    : { baseURL: definition.baseUrl, fetch: keepAliveFetch };
}

/**
 * The provider package's model, imported on the first call that needs it: each package (with the
 * SDK's schemas) holds several megabytes, and a catalog names few of them.
 */
async function languageModelOf(
  definition: RemoteModelDefinition,
  provider: AiSdkProvider,
  secrets: SecretSource,
): Promise<LanguageModelV3> {
  const apiKey = apiKeyOf(definition, secrets);
  switch (provider) {
    case 'anthropic': {
      const { createAnthropic } = await import('@ai-sdk/anthropic');
      return createAnthropic({ apiKey, ...baseUrlOption(definition) })(definition.model);
    }
    case 'google': {
      const { createGoogleGenerativeAI } = await import('@ai-sdk/google');
      return createGoogleGenerativeAI({ apiKey, ...baseUrlOption(definition) })(definition.model);
    }
  }
}

/** The provider package's embedding model, imported on first use (as for chat). */
async function embeddingModelOf(
  definition: RemoteModelDefinition,
  secrets: SecretSource,
): Promise<EmbeddingModelV3> {
  const apiKey = apiKeyOf(definition, secrets);
  switch (definition.provider) {
    case 'openai': {
      const { createOpenAI } = await import('@ai-sdk/openai');
      return createOpenAI({ apiKey, ...baseUrlOption(definition) }).embedding(definition.model);
    }
    case 'google': {
      const { createGoogleGenerativeAI } = await import('@ai-sdk/google');
      return createGoogleGenerativeAI({ apiKey, ...baseUrlOption(definition) }).embedding(
        definition.model,
      );
    }
    case 'openai-compatible': {
      const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');
      return createOpenAICompatible({
        name: definition.name,
        baseURL: definition.baseUrl ?? '',
        fetch: keepAliveFetch,
        ...(apiKey === undefined ? {} : { apiKey }),
      }).embeddingModel(definition.model);
    }
    case 'anthropic':
      throw new Error('Anthropic offers no embedding models');
    case 'deepgram':
      throw new Error('Deepgram offers no embedding models');
  }
}

export function createRemoteChatModel(
  definition: RemoteModelDefinition,
  secrets: SecretSource,
  tokens: BpeTokenCounter,
  /** Fetches image URLs a provider cannot fetch itself; absent: such images are refused (400). */
  fetchImage?: ImageFetcher,
): ChatModel {
  const { provider } = definition;
  switch (provider) {
    case 'openai':
    case 'openai-compatible':
      // One path, pass-through: no AI SDK, fetch emulation or web streams per call
      // (docs/decisions.md).
      return new OpenAiCompatibleChatModel(definition, apiKeyOf(definition, secrets), tokens);
    case 'anthropic':
    case 'google':
      return new AiSdkChatModel(
        definition,
        provider,
        () => languageModelOf(definition, provider, secrets),
        tokens,
        fetchImage,
      );
    case 'deepgram':
      throw new Error('Deepgram offers no chat models');
  }
}

export function createRemoteEmbeddingModel(
  definition: RemoteModelDefinition,
  secrets: SecretSource,
): EmbeddingModel {
  return new AiSdkEmbeddingModel(definition, () => embeddingModelOf(definition, secrets));
}
