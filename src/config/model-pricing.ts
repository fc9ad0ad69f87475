// A model entry's prices as its definition keeps them: micro-dollars (integers) per million
// tokens, per minute of audio, per million characters. `pricing` wins over the older
// `input_cost_per_million` / `output_cost_per_million` (which the router's strategies read too);
// models that run on this machine cost nothing unless priced; a model with no price is unknown.
import type { ModelPricing } from './config.js';
import type { ModelEntry } from './model-entry.js';

/** Connections whose calls cost nothing but the machine they run on. */
const onThisMachine = new Set(['local', 'espeak-ng', 'sherpa-onnx', 'pocketsphinx']);

/** US dollars to micro-dollars: prices count to the sixth decimal. */
function micros(dollars: number | undefined): number | null {
  return dollars === undefined ? null : Math.round(dollars * 1_000_000);
}

const free: ModelPricing = {
  inputPerMtok: 0,
  outputPerMtok: 0,
  cachedInputPerMtok: 0,
  cacheWritePerMtok: 0,
  reasoningPerMtok: 0,
  perAudioMinute: 0,
  perMchar: 0,
  asOf: null,
};

export function pricingOf(entry: ModelEntry): ModelPricing | null {
  const given = entry.pricing ?? {};
  const input = given.input_per_mtok ?? entry.input_cost_per_million;
  const output = given.output_per_mtok ?? entry.output_cost_per_million;
  const pricing: ModelPricing = {
    inputPerMtok: micros(input),
    outputPerMtok: micros(output),
    cachedInputPerMtok: micros(given.cached_input_per_mtok),
    cacheWritePerMtok: micros(given.cache_write_per_mtok),
    reasoningPerMtok: micros(given.reasoning_per_mtok),
    perAudioMinute: micros(given.per_audio_minute),
    perMchar: micros(given.per_mchar),
    asOf: given.as_of ?? null,
  };
  const priced = Object.entries(pricing).some(
    ([field, value]) => field !== 'asOf' && value !== null,
  );
  if (priced) return pricing;
  return onThisMachine.has(entry.provider) ? free : null;
}
