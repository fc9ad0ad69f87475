// Who made a model (the spec's `provider` field of the catalog), from its configuration.
import type { ModelProvider } from './config.js';
import type { ModelEntry } from './model-entry.js';

/** The maker a first-party provider implies; others name it with `maker` or in the model id. */
const makerOfProvider: Partial<Record<ModelProvider, string>> = {
  openai: 'OpenAI',
  anthropic: 'Anthropic',
  google: 'Google',
  deepgram: 'Deepgram',
  'espeak-ng': 'eSpeak NG',
  pocketsphinx: 'Carnegie Mellon University',
};

/** Organisations on the Hugging Face Hub and the makers they publish for. */
const makerOfHubOwner: Record<string, string> = {
  qwen: 'Alibaba',
  'meta-llama': 'Meta',
  mistralai: 'Mistral AI',
  google: 'Google',
  microsoft: 'Microsoft',
  deepseek: 'DeepSeek',
  'deepseek-ai': 'DeepSeek',
  openai: 'OpenAI',
};

/** Model families whose id says who made them, whoever serves them. */
const makerOfModelFamily: readonly (readonly [RegExp, string])[] = [
  [/^(gpt-|o\d|text-embedding-|chatgpt|dall-e|whisper|tts-)/, 'OpenAI'],
  [/^claude/, 'Anthropic'],
  [/^(gemini|gemma|text-embedding-00|embedding-00)/, 'Google'],
  [/^(llama|meta-llama|codellama)/, 'Meta'],
  [/^(qwen|qwq)/, 'Alibaba'],
  [/^(mistral|mixtral|codestral|ministral|pixtral)/, 'Mistral AI'],
  [/^deepseek/, 'DeepSeek'],
  [/^phi-/, 'Microsoft'],
];

/**
 * The spec's `provider` — who made the model: `maker` when configured, the vendor for the three
 * first-party providers, the owner in a Hub-style id (`Qwen/…` → Alibaba), a well-known model
 * family in the id (`llama-3.1-8b` → Meta), else "unknown".
 */
export function makerOf(entry: ModelEntry): string {
  if (entry.maker !== undefined) return entry.maker;
  const vendor = makerOfProvider[entry.provider];
  if (vendor !== undefined) return vendor;
  const id = entry.model ?? entry.source?.replace(/^hf:/, '') ?? '';
  const [owner, rest] = id.split('/');
  if (owner !== undefined && rest !== undefined && owner !== '') {
    return makerOfHubOwner[owner.toLowerCase()] ?? owner;
  }
  const family = makerOfModelFamily.find(([pattern]) => pattern.test(id.toLowerCase()));
  return family?.[1] ?? 'unknown';
}
