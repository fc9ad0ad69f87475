// The kinds of model the catalog holds (chat, embedding; speech kinds join here), as one table:
// each entry says how to build a model of its kind for a definition, so a new kind is one entry.
import {
  type AppConfig,
  type EngineModelDefinition,
  type LocalModelDefinition,
  type ModelDefinition,
  type ModelType,
  type RemoteModelDefinition,
  type SecretSource,
} from '../config/config.js';
import {
  DeepgramSpeechModel,
  DeepgramTranscriptionModel,
} from './speech/engines/deepgram-models.js';
import {
  OpenAiSpeechModel,
  OpenAiTranscriptionModel,
} from './speech/engines/openai-audio-models.js';
import type { SpeechEngines } from './speech/speech-engines.js';
import type { SpeechModel, TranscriptionModel } from './speech/speech-models.js';
import type { BpeTokenCounter } from './bpe-token-counter.js';
import type { LocalEngine } from './local/local-engine.js';
import { imageFetcherFromConfig } from './providers/fetched-images.js';
import { createRemoteChatModel, createRemoteEmbeddingModel } from './providers/remote-models.js';
import type { ChatModel, EmbeddingModel } from './spec.js';
import { tracedChatModel, tracedEmbeddingModel } from '../telemetry/gen-ai-calls.js';

/** The interface a model of each kind implements. */
export interface ModelOfKind {
  chat: ChatModel;
  embedding: EmbeddingModel;
  transcription: TranscriptionModel;
  speech: SpeechModel;
}

/** What a kind's factory may use to build a model. */
export interface ModelFactoryContext {
  readonly config: AppConfig;
  readonly secrets: SecretSource;
  readonly local: LocalEngine;
  readonly speech: SpeechEngines;
  readonly tokens: BpeTokenCounter;
}

/** How a definition's model is reached: a GGUF file, a speech engine here, or a remote API. */
export type Connection =
  | { kind: 'local'; definition: LocalModelDefinition }
  | { kind: 'engine'; definition: EngineModelDefinition }
  | { kind: 'remote'; definition: RemoteModelDefinition };

export function connectionOf(definition: ModelDefinition): Connection {
  switch (definition.provider) {
    case 'local':
      return { kind: 'local', definition };
    case 'espeak-ng':
    case 'sherpa-onnx':
    case 'pocketsphinx':
      return { kind: 'engine', definition };
    case 'openai':
    case 'anthropic':
    case 'google':
    case 'openai-compatible':
    case 'deepgram':
      return { kind: 'remote', definition };
  }
}

/** Configuration validation keeps a kind and a connection that cannot serve it apart. */
function unsupported(definition: ModelDefinition, kind: ModelType): Error {
  return new Error(`model '${definition.name}' (${definition.provider}) cannot serve ${kind}`);
}

export interface ModelKindEntry<K extends ModelType> {
  /** How messages name the kind: "a chat model". */
  readonly label: string;
  create(definition: ModelDefinition, context: ModelFactoryContext): ModelOfKind[K];
  /** Why a definition of this kind cannot be served by its connection, beyond the general checks. */
  unavailability?(definition: ModelDefinition): string | null;
  /** The configured default of the kind, when the configuration names one. */
  configuredDefault?(config: AppConfig): string | null;
}

function chatModelOf(definition: ModelDefinition, context: ModelFactoryContext): ChatModel {
  const connection = connectionOf(definition);
  if (connection.kind === 'local') return context.local.chatModel(connection.definition);
  if (connection.kind === 'engine') throw unsupported(definition, 'chat');
  return createRemoteChatModel(
    connection.definition,
    context.secrets,
    context.tokens,
    // Image URLs a provider cannot fetch: fetched under the web agent's address policy.
    imageFetcherFromConfig(context.config.web),
  );
}

export const modelKinds: { readonly [K in ModelType]: ModelKindEntry<K> } = {
  chat: {
    label: 'a chat model',
    // Each traced (when telemetry runs): a deployment's calls too, as its own upstream.
    create: (definition, context) => tracedChatModel(chatModelOf(definition, context), definition),
    configuredDefault: (config) => config.models.defaultModel,
  },
  embedding: {
    label: 'an embedding model',
    create: (definition, context) => {
      const connection = connectionOf(definition);
      if (connection.kind === 'engine') throw unsupported(definition, 'embedding');
      const model =
        connection.kind === 'local'
          ? context.local.embeddingModel(connection.definition)
          : createRemoteEmbeddingModel(connection.definition, context.secrets);
      return tracedEmbeddingModel(model, definition);
    },
    unavailability: (definition) =>
      definition.provider === 'anthropic'
        ? 'Anthropic offers no embedding models; configure another provider for embeddings.'
        : null,
    configuredDefault: (config) => config.knowledge.embeddingModel,
  },
  transcription: {
    label: 'a transcription model',
    create: (definition, context) => {
      const connection = connectionOf(definition);
      if (connection.kind === 'engine') {
        return context.speech.transcriptionModel(connection.definition);
      }
      if (connection.kind === 'local') throw unsupported(definition, 'transcription');
      const remote = connection.definition;
      if (remote.provider === 'deepgram') {
        return new DeepgramTranscriptionModel(remote, context.secrets);
      }
      return new OpenAiTranscriptionModel(remote, context.secrets);
    },
    configuredDefault: (config) => config.speech.defaultTranscriptionModel,
  },
  speech: {
    label: 'a speech model',
    create: (definition, context) => {
      const connection = connectionOf(definition);
      if (connection.kind === 'engine') return context.speech.speechModel(connection.definition);
      if (connection.kind === 'local') throw unsupported(definition, 'speech');
      const remote = connection.definition;
      if (remote.provider === 'deepgram') return new DeepgramSpeechModel(remote, context.secrets);
      return new OpenAiSpeechModel(remote, context.secrets);
    },
    configuredDefault: (config) => config.speech.defaultSpeechModel,
  },
};
