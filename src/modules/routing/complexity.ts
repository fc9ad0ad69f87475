// How demanding a message is — simple, moderate or complex — from signals a person can check:
// length, sentences, separate questions, steps asked for, constraints, code, and entities.

export type ComplexityLevel = 'simple' | 'moderate' | 'complex';

export interface ComplexitySignals {
  readonly words: number;
  readonly sentences: number;
  readonly questions: number;
  /** Words that ask for several steps or a structured answer ("step by step", "compare", …). */
  readonly multi_step_markers: number;
  /** Words that constrain the answer ("must", "at least", "without", …). */
  readonly constraints: number;
  readonly has_code: boolean;
  readonly entities: number;
}

export interface Complexity {
  readonly level: ComplexityLevel;
  /** The points the signals add up to (see `assessComplexity`). */
  readonly score: number;
  readonly signals: ComplexitySignals;
}

const multiStep =
  /\b(step[- ]by[- ]step|steps|first\b.*\bthen|then\b|compare|comparison|contrast|pros and cons|trade-?offs?|analy[sz]e|evaluate|plan|design|architecture|explain why|in detail|detailed|outline|break down|walk me through|derive|prove)\b/gi;
const constraintWords =
  /\b(must|should|at least|at most|no more than|no less than|without|exactly|only|never|always|within|under \d|less than|more than|avoid|ensure|make sure|required?)\b/gi;
const codeSigns =
  /```|`[^`]+`|\b(function|def|class|return|import|SELECT|const|let|var)\b.*[({=;]|=>|\w+\(\)|[{};]\s*$/m;

function countMatches(text: string, pattern: RegExp): number {
  return text.match(pattern)?.length ?? 0;
}

/**
 * Points: more than 25 words +1, more than 80 +1 more; 3+ sentences +1; 2+ questions +1; each
 * multi-step marker +1 (at most 2); 2+ constraints +1; code +1; 4+ entities +1. Up to 1 point is
 * simple, up to 3 moderate, more complex.
 */
export function assessComplexity(text: string, entityCount: number): Complexity {
  const sample = text.slice(0, 20_000);
  const words = sample.match(/[\p{L}\p{N}]+/gu)?.length ?? 0;
  const sentences = Math.max(
    words === 0 ? 0 : 1,
    sample.split(/[.!?]+(?:\s|$)|\n{2,}/).filter((part) => part.trim().length > 0).length,
  );
  const signals: ComplexitySignals = {
    words,
    sentences,
    questions: countMatches(sample, /\?/g),
    multi_step_markers: countMatches(sample, multiStep),
    constraints: countMatches(sample, constraintWords),
    has_code: codeSigns.test(sample),
    entities: entityCount,
  };
  let score = 0;
  if (words > 25) score += 1;
  if (words > 80) score += 1;
  if (sentences >= 3) score += 1;
  if (signals.questions >= 2) score += 1;
  score += Math.min(2, signals.multi_step_markers);
  if (signals.constraints >= 2) score += 1;
  if (signals.has_code) score += 1;
  if (entityCount >= 4) score += 1;
  const level: ComplexityLevel = score <= 1 ? 'simple' : score <= 3 ? 'moderate' : 'complex';
  return { level, score, signals };
}
