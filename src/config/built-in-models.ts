// The models the service offers when the config file lists none, and the offline speech engines
// it keeps for the kinds a file does not list.
import type { ModelEntry } from './model-entry.js';

/** The default local model: small, Apache-2.0, instruction-tuned, ~400 MB (see docs/decisions.md). */
export const defaultLocalModel: ModelEntry = {
  name: 'qwen2.5-0.5b-instruct',
  display_name: 'Qwen2.5 0.5B Instruct (local, Q4_K_M)',
  provider: 'local',
  maker: 'Alibaba',
  model: 'Qwen/Qwen2.5-0.5B-Instruct-GGUF',
  source: 'hf:Qwen/Qwen2.5-0.5B-Instruct-GGUF/qwen2.5-0.5b-instruct-q4_k_m.gguf',
  max_tokens: 1024,
  context_length: 4096,
  input_cost_per_million: 0,
  output_cost_per_million: 0,
  quality: 20,
  typical_latency_ms: 400,
};

/**
 * When the built-in catalog's prices were read, from the providers' published price lists
 * (standard tier, US dollars). Deepgram's are left out: a model without a price records its
 * calls' cost as unknown rather than a guess.
 */
const pricesReadOn = '2026-11-28';

/** Used when the config file defines no `models`: the local default plus common providers. */
export const builtInModels: readonly ModelEntry[] = [
  defaultLocalModel,
  {
    name: 'gpt-4o-mini',
    display_name: 'GPT-4o mini',
    provider: 'openai',
    model: 'gpt-4o-mini',
    max_tokens: 16_384,
    context_length: 128_000,
    pricing: {
      input_per_mtok: 0.15,
      cached_input_per_mtok: 0.075,
      output_per_mtok: 0.6,
      as_of: pricesReadOn,
    },
    quality: 70,
    typical_latency_ms: 500,
  },
  {
    name: 'claude-3-5-haiku',
    display_name: 'Claude 3.5 Haiku',
    provider: 'anthropic',
    model: 'claude-3-5-haiku-latest',
    max_tokens: 8192,
    context_length: 200_000,
    pricing: {
      input_per_mtok: 0.8,
      cached_input_per_mtok: 0.08,
      cache_write_per_mtok: 1,
      output_per_mtok: 4,
      as_of: pricesReadOn,
    },
    quality: 68,
    typical_latency_ms: 700,
  },
  {
    name: 'gemini-2.0-flash',
    display_name: 'Gemini 2.0 Flash',
    provider: 'google',
    model: 'gemini-2.0-flash',
    max_tokens: 8192,
    context_length: 1_048_576,
    pricing: {
      input_per_mtok: 0.1,
      cached_input_per_mtok: 0.025,
      output_per_mtok: 0.4,
      as_of: pricesReadOn,
    },
    quality: 72,
    typical_latency_ms: 450,
  },
  {
    name: 'text-embedding-3-small',
    display_name: 'OpenAI text-embedding-3-small',
    provider: 'openai',
    model: 'text-embedding-3-small',
    type: 'embedding',
    max_tokens: 1,
    context_length: 8191,
    pricing: { input_per_mtok: 0.02, as_of: pricesReadOn },
  },
  ...builtInSpeechModels(),
];

/**
 * Speech models offered out of the box: the system's pocketsphinx and espeak-ng (no download),
 * Whisper tiny through sherpa-onnx (`npm run models -- pull whisper-tiny`), and the cloud ones
 * that become available when their key is set. See docs/decisions.md ("Speech").
 */
function builtInSpeechModels(): ModelEntry[] {
  const whisper = 'hf:csukuangfj/sherpa-onnx-whisper-tiny';
  return [
    {
      name: 'pocketsphinx-en-us',
      display_name: 'PocketSphinx US English (offline, system package)',
      provider: 'pocketsphinx',
      model: 'en-us',
      type: 'transcription',
      languages: ['en-US'],
    },
    {
      name: 'whisper-tiny',
      display_name: 'Whisper tiny, multilingual (offline, sherpa-onnx int8)',
      provider: 'sherpa-onnx',
      maker: 'OpenAI',
      model: 'csukuangfj/sherpa-onnx-whisper-tiny',
      type: 'transcription',
      architecture: 'whisper',
      files: {
        encoder: { source: `${whisper}/tiny-encoder.int8.onnx` },
        decoder: { source: `${whisper}/tiny-decoder.int8.onnx` },
        tokens: { source: `${whisper}/tiny-tokens.txt` },
      },
    },
    {
      name: 'espeak-ng',
      display_name: 'eSpeak NG (offline, WebAssembly, 100+ languages)',
      provider: 'espeak-ng',
      model: 'espeak-ng',
      type: 'speech',
      default_voice: 'en-us',
    },
    {
      name: 'whisper-1',
      display_name: 'OpenAI Whisper',
      provider: 'openai',
      model: 'whisper-1',
      type: 'transcription',
      pricing: { per_audio_minute: 0.006, as_of: pricesReadOn },
    },
    {
      name: 'tts-1',
      display_name: 'OpenAI TTS',
      provider: 'openai',
      model: 'tts-1',
      type: 'speech',
      pricing: { per_mchar: 15, as_of: pricesReadOn },
      default_voice: 'alloy',
      voices: ['alloy', 'ash', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer'].map(
        (id) => ({ id }),
      ),
    },
    {
      name: 'deepgram-nova-3',
      display_name: 'Deepgram Nova-3',
      provider: 'deepgram',
      model: 'nova-3',
      type: 'transcription',
    },
    {
      name: 'deepgram-aura-2',
      display_name: 'Deepgram Aura-2',
      provider: 'deepgram',
      model: 'aura-2',
      type: 'speech',
      default_voice: 'aura-2-thalia-en',
      voices: [
        { id: 'aura-2-thalia-en', name: 'Thalia', languages: ['en-US'] },
        { id: 'aura-2-andromeda-en', name: 'Andromeda', languages: ['en-US'] },
        { id: 'aura-2-apollo-en', name: 'Apollo', languages: ['en-US'] },
        { id: 'aura-2-arcas-en', name: 'Arcas', languages: ['en-US'] },
      ],
    },
  ];
}

/** The built-in engines that run on this machine without a key (no cloud speech models). */
const offlineEngineProviders = new Set(['pocketsphinx', 'sherpa-onnx', 'espeak-ng']);

/**
 * A config file that lists models but none of a speech kind keeps the built-in offline engines of
 * that kind (PocketSphinx and Whisper tiny for transcription, eSpeak NG for speech), so that adding
 * a chat model does not switch voice off. Listing a model of the kind, or
 * `speech.builtin_engines: false`, replaces them.
 */
export function builtInEnginesFor(entries: readonly ModelEntry[]): ModelEntry[] {
  const kinds = new Set(entries.map((entry) => entry.type ?? 'chat'));
  const names = new Set(entries.map((entry) => entry.name));
  return builtInSpeechModels().filter(
    (entry) =>
      offlineEngineProviders.has(entry.provider) &&
      !kinds.has(entry.type ?? 'chat') &&
      !names.has(entry.name),
  );
}
