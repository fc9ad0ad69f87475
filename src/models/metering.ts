// What every model call is metered by: who it is for (its attribution), what it used, and what
// that cost. The usage module implements the meter (the ledger, budgets); the registry's models,
// the Anthropic pass-through and the speech service call it around every upstream call: `start`
// before (a budget may refuse the call there, before anything is sent), the ticket's `end` after,
// whatever the outcome.
import type { ModelDefinition, ModelPricing } from '../config/config.js';
import type { CallAttribution, TokenUsage } from './spec.js';

export type { CallAttribution };

/** What a call used, each count as the provider reported it (0 when not reported). */
export interface MeteredUsage {
  /** All input tokens, the cached and cache-written ones included. */
  readonly inputTokens: number;
  /** All output tokens, reasoning included. */
  readonly outputTokens: number;
  readonly cachedInputTokens: number;
  readonly cacheWriteTokens: number;
  readonly reasoningTokens: number;
  readonly audioMs: number;
  readonly characters: number;
}

const million = 1_000_000;

export const noUsage: MeteredUsage = {
  inputTokens: 0,
  outputTokens: 0,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  audioMs: 0,
  characters: 0,
};

/** A call's usage in the meter's terms: every field written out, one literal of one shape. */
export function meteredUsageOf(usage: TokenUsage): MeteredUsage {
  return {
    inputTokens: usage.promptTokens,
    outputTokens: usage.completionTokens,
    cachedInputTokens: usage.cachedTokens ?? 0,
    cacheWriteTokens: usage.cacheWriteTokens ?? 0,
    reasoningTokens: usage.reasoningTokens ?? 0,
    audioMs: 0,
    characters: 0,
  };
}

export type CallStatus = 'ok' | 'error' | 'aborted';

export interface CallEnd {
  readonly status: CallStatus;
  /** The error's code when `error`. */
  readonly errorCode?: string | null | undefined;
  /** What the call used; for an aborted stream, what was counted of it. */
  readonly usage: MeteredUsage;
  /** The model's time, retries included (not time queued or waiting for a person). */
  readonly latencyMs: number;
  /** Which upstream of the model answered (a deployment's name); null for the model's own. */
  readonly deployment?: string | null | undefined;
  /** Answered from the exact response cache: recorded at cost 0. */
  readonly cacheHit?: boolean | undefined;
}

/** A call under way: ended exactly once, whatever happened. */
export interface MeterTicket {
  end(end: CallEnd): void;
}

export interface MeterStart {
  readonly definition: ModelDefinition;
  readonly attribution: CallAttribution;
  /**
   * The call's worst case, counted only when a budget needs it: its counted input and its output
   * ceiling (`max_tokens`), or the audio and characters it will take.
   */
  readonly worstCase: () => Promise<MeteredUsage>;
}

export interface UsageMeter {
  /**
   * Called before the upstream call: reserves the worst case on every budget on the call's path
   * (throws the contract's 429 `budget_exceeded`, or 503 when the budgets' store cannot be
   * reached), and answers the ticket to end it with.
   */
  start(start: MeterStart): Promise<MeterTicket>;
}

/** A meter that keeps nothing (tests of a model alone, tools without a ledger). */
export const unmetered: UsageMeter = {
  start: () => Promise.resolve({ end: () => undefined }),
};

/**
 * The cost of `usage` at `pricing`, in micro-dollars, rounded half up once for the whole call;
 * null when a count that is not zero has no rate to stand for it. Cached input and cache writes
 * fall back to the input rate, reasoning to the output rate.
 */
export function costMicros(pricing: ModelPricing | null, usage: MeteredUsage): number | null {
  if (pricing === null) return null;
  const cached = Math.min(usage.cachedInputTokens, usage.inputTokens);
  const written = Math.min(usage.cacheWriteTokens, usage.inputTokens - cached);
  const reasoning = Math.min(usage.reasoningTokens, usage.outputTokens);
  const terms: Array<[count: number, rate: number | null, per: number]> = [
    [usage.inputTokens - cached - written, pricing.inputPerMtok, million],
    [cached, pricing.cachedInputPerMtok ?? pricing.inputPerMtok, million],
    [written, pricing.cacheWritePerMtok ?? pricing.inputPerMtok, million],
    [
      usage.outputTokens - (pricing.reasoningPerMtok === null ? 0 : reasoning),
      pricing.outputPerMtok,
      million,
    ],
    [pricing.reasoningPerMtok === null ? 0 : reasoning, pricing.reasoningPerMtok, million],
    [usage.audioMs, pricing.perAudioMinute, 60_000],
    [usage.characters, pricing.perMchar, million],
  ];
  const denominator = 60_000 * million;
  // Over a common denominator (60,000 × 1,000,000), so that the sum is exact before rounding:
  // in plain numbers while every term stays a safe integer (any ordinary call), else in BigInt.
  let numerator = 0;
  for (const [count, rate, per] of terms) {
    if (count <= 0) continue;
    if (rate === null) return null;
    numerator += Math.round(count) * rate * (denominator / per);
  }
  if (Number.isSafeInteger(numerator)) {
    const remainder = numerator % denominator;
    return (numerator - remainder) / denominator + (2 * remainder >= denominator ? 1 : 0);
  }
  let big = 0n;
  for (const [count, rate, per] of terms) {
    if (count > 0) big += BigInt(Math.round(count)) * BigInt(rate!) * BigInt(denominator / per);
  }
  const bigDenominator = BigInt(denominator);
  return Number((big * 2n + bigDenominator) / (bigDenominator * 2n));
}
