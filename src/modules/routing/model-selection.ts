// Picks a chat model by strategy from the catalog's facts (quality, cost per million tokens,
// typical latency): balanced, quality, cost or latency, with the message's complexity steering
// the balanced strategy toward quality for harder messages.
import type { ModelDefinition } from '../../config/config.js';
import type { ComplexityLevel } from './complexity.js';

export const routingStrategies = ['balanced', 'quality', 'cost', 'latency'] as const;
export type RoutingStrategy = (typeof routingStrategies)[number];

export interface RankedModel {
  readonly definition: ModelDefinition;
  /** 0–1: how well the model fits the strategy among the candidates. */
  readonly fit: number;
  /** Why, in a few words ("quality 70, $0.75 per M tokens, ~500 ms"). */
  readonly facts: string;
}

/** Weights of quality, cheapness and speed in the balanced strategy, by complexity. */
const balancedWeights: Record<ComplexityLevel, [number, number, number]> = {
  simple: [0.3, 0.35, 0.35],
  moderate: [0.5, 0.25, 0.25],
  complex: [0.7, 0.15, 0.15],
};

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function costOf(definition: ModelDefinition): number | null {
  const { inputCostPerMillion, outputCostPerMillion } = definition.routing;
  if (inputCostPerMillion === null && outputCostPerMillion === null) return null;
  // A typical chat turn reads about three times what it writes.
  return (3 * (inputCostPerMillion ?? 0) + (outputCostPerMillion ?? 0)) / 4;
}

function describe(definition: ModelDefinition): string {
  const facts: string[] = [];
  const { quality, typicalLatencyMs } = definition.routing;
  const cost = costOf(definition);
  facts.push(quality === null ? 'quality not configured' : `quality ${quality}`);
  facts.push(cost === null ? 'cost not configured' : `$${round(cost)} per M tokens`);
  facts.push(typicalLatencyMs === null ? 'latency not configured' : `~${typicalLatencyMs} ms`);
  return facts.join(', ');
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

/** Min–max scaled to 0–1 (1 = best); a missing value counts as the median of the others. */
function scaled(values: (number | null)[], higherIsBetter: boolean): number[] {
  const known = values.filter((value): value is number => value !== null);
  const fill = median(known) ?? 0;
  const filled = values.map((value) => value ?? fill);
  const low = Math.min(...filled);
  const high = Math.max(...filled);
  return filled.map((value) => {
    if (high === low) return 0.5;
    const position = (value - low) / (high - low);
    return higherIsBetter ? position : 1 - position;
  });
}

/**
 * Ranks `candidates` (best first). `defaultModel` wins ties, so that with no facts configured the
 * default model is chosen.
 */
export function rankModels(
  candidates: readonly ModelDefinition[],
  strategy: RoutingStrategy,
  complexity: ComplexityLevel,
  defaultModel: string | null,
): RankedModel[] {
  if (candidates.length === 0) return [];
  const quality = scaled(
    candidates.map((definition) => definition.routing.quality),
    true,
  );
  const cheapness = scaled(candidates.map(costOf), false);
  const speed = scaled(
    candidates.map((definition) => definition.routing.typicalLatencyMs),
    false,
  );
  const weights: [number, number, number] =
    strategy === 'quality'
      ? [1, 0.01, 0.01]
      : strategy === 'cost'
        ? [0.01, 1, 0.01]
        : strategy === 'latency'
          ? [0.01, 0.01, 1]
          : balancedWeights[complexity];
  const total = weights[0] + weights[1] + weights[2];
  return candidates
    .map((definition, index) => {
      const fit =
        (weights[0] * quality[index]! +
          weights[1] * cheapness[index]! +
          weights[2] * speed[index]!) /
        total;
      return { definition, fit: round(fit), facts: describe(definition) };
    })
    .sort(
      (a, b) =>
        b.fit - a.fit ||
        Number(b.definition.name === defaultModel) - Number(a.definition.name === defaultModel) ||
        a.definition.name.localeCompare(b.definition.name),
    );
}
