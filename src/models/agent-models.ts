// How agents use models: text, or JSON matching a schema (constrained where the back-end can,
// always validated, with one repair attempt, else the plain text for the agent's own fallback),
// through the registry's fallbacks, counting tokens.
import type { JSONSchema7 } from '@ai-sdk/provider';
import type { ModelRegistry } from './model-registry.js';
import { canServe, type CapabilityNeed } from './capabilities.js';
import {
  UpstreamError,
  type CallAttribution,
  type ChatParams,
  type ChatTurn,
  type GenerationResult,
} from './spec.js';
import { checkAgainstSchema } from '../validation/schema-validator.js';

export interface AgentPrompt {
  system: string;
  user: string;
  maxTokens?: number | undefined;
  temperature?: number | undefined;
}

/** A structured answer, or the model's plain text and why it is not one. */
export type StructuredAnswer<T> =
  | { structured: true; value: T }
  | { structured: false; text: string; reason: string };

function withoutFence(text: string): string {
  return text
    .trim()
    .replace(/^```(?:json)?\s*/i, '')
    .replace(/\s*```$/, '');
}

function looksLikeJson(text: string): boolean {
  return /^[[{]/.test(withoutFence(text));
}

/**
 * The JSON value of an answer, or undefined: the whole text, else the object it wraps in a
 * Markdown fence or in prose ("Here is the JSON: {…}"), which models write despite being asked not to.
 */
function parseJsonAnswer(text: string): unknown {
  const trimmed = withoutFence(text);
  const candidates = [trimmed];
  const start = trimmed.indexOf('{');
  const end = trimmed.lastIndexOf('}');
  if (start > 0 && end > start) candidates.push(trimmed.slice(start, end + 1));
  for (const candidate of candidates) {
    try {
      return JSON.parse(candidate) as unknown;
    } catch {
      // Try the next reading.
    }
  }
  return undefined;
}

export class AgentModels {
  /** Tokens used by every call so far (prompt and completion). */
  tokensUsed = 0;

  constructor(
    private readonly registry: ModelRegistry,
    /** The agent's model, or null for the service's default. */
    private readonly requested: string | null,
    /** Whose calls these are (its account also queues local generation fairly). */
    private readonly attribution: CallAttribution,
    private readonly signal: AbortSignal,
  ) {}

  /** The model this agent uses, when one is configured at all. */
  get name(): string | null {
    return this.requested ?? this.registry.defaultModel;
  }

  /** Whether the model, or one of its fallbacks, can answer now. */
  available(): boolean {
    const name = this.name;
    if (name === null) return false;
    const definition = this.registry.find(name);
    if (definition === undefined) return false;
    return [name, ...definition.fallbacks].some(
      (candidate) => this.registry.status(candidate)?.available === true,
    );
  }

  /** Why no model can be used, as the error an execution fails with. */
  unavailableError(purpose: string): UpstreamError {
    const name = this.name;
    const reason =
      name === null
        ? 'no chat model is configured'
        : (this.registry.status(name)?.reason ?? `model '${name}' is not in the catalog`);
    return new UpstreamError(
      'model_unavailable',
      `${purpose} needs a model, and none is available: ${reason}`,
    );
  }

  async text(prompt: AgentPrompt): Promise<string> {
    return (await this.call(prompt)).text;
  }

  /**
   * JSON matching `schema`; a reply that does not is sent back once with the problem named. When
   * the second reply does not match either (many OpenAI-compatible servers ignore
   * `response_format`), the answer is the model's plain text and why, for the agent's fallback.
   */
  async structured<T>(prompt: AgentPrompt, schema: JSONSchema7): Promise<StructuredAnswer<T>> {
    const first = await this.call(prompt, schema);
    const parsed = this.parse<T>(first.text, schema);
    if (parsed.ok) return { structured: true, value: parsed.value };
    const repaired = await this.call(
      {
        ...prompt,
        user: `${prompt.user}\n\nYour previous answer was not valid: ${parsed.problem}\nAnswer again with only a JSON object that matches the schema.`,
      },
      schema,
    );
    const second = this.parse<T>(repaired.text, schema);
    if (second.ok) return { structured: true, value: second.value };
    // The plain-text answer to fall back on: the latest that is not a JSON attempt.
    const text =
      [repaired.text, first.text].find(
        (answer) => !looksLikeJson(answer) && answer.trim() !== '',
      ) ?? first.text;
    return { structured: false, text: text.trim(), reason: this.mismatchReason(second.problem) };
  }

  /** JSON matching `schema`, or an upstream error once the repair attempt failed too. */
  async object<T>(prompt: AgentPrompt, schema: JSONSchema7): Promise<T> {
    const answer = await this.structured<T>(prompt, schema);
    if (answer.structured) return answer.value;
    throw new UpstreamError('upstream_error', `${answer.reason}.`, { fallbackWorthy: false });
  }

  /**
   * One turn of a conversation with tools (a tool-calling agent's loop): the model's answer with
   * the calls it proposes. Fallbacks that cannot call tools are skipped; a model that cannot is an
   * error naming it.
   */
  async turn(
    messages: readonly ChatTurn[],
    params: ChatParams,
    maxTokens?: number,
  ): Promise<GenerationResult> {
    const name = this.name;
    if (name === null || !this.available()) throw this.unavailableError('This agent');
    const needs: CapabilityNeed[] = [{ capability: 'tools', param: 'tools', what: 'tool calling' }];
    const definition = this.registry.find(name);
    if (definition !== undefined && !canServe(definition, needs)) {
      throw new UpstreamError(
        'model_unavailable',
        `Model '${name}' cannot call tools (its capabilities: ${definition.capabilities.join(', ') || 'none'}); give the agent a model with the 'tools' capability.`,
        { fallbackWorthy: false },
      );
    }
    const { result } = await this.registry.withFallbacks(
      name,
      (model, candidate) =>
        model.generate({
          messages,
          maxTokens: Math.min(maxTokens ?? candidate.maxTokens, candidate.maxTokens),
          signal: this.signal,
          fairnessKey: this.attribution.accountId,
          attribution: this.attribution,
          params,
        }),
      (candidate) => canServe(candidate, needs),
    );
    this.tokensUsed += result.usage.promptTokens + result.usage.completionTokens;
    return result;
  }

  private mismatchReason(problem: string): string {
    const definition = this.name === null ? undefined : this.registry.find(this.name);
    const hint =
      definition !== undefined && 'structuredOutputs' in definition && !definition.structuredOutputs
        ? `; model '${definition.name}' is not sent a JSON Schema (set \`structured_outputs: true\` if its server supports it)`
        : '';
    return `The model's answer did not match the expected structure twice (${problem})${hint}`;
  }

  private parse<T>(
    text: string,
    schema: JSONSchema7,
  ): { ok: true; value: T } | { ok: false; problem: string } {
    const value = parseJsonAnswer(text);
    if (value === undefined) return { ok: false, problem: 'it is not JSON' };
    const checked = checkAgainstSchema<T>(schema, value, 'answer', 'answer');
    return checked.ok
      ? { ok: true, value: checked.value }
      : { ok: false, problem: checked.error.message };
  }

  private async call(prompt: AgentPrompt, schema?: JSONSchema7): Promise<{ text: string }> {
    const name = this.name;
    if (name === null || !this.available()) throw this.unavailableError('This agent');
    const system =
      schema === undefined
        ? prompt.system
        : `${prompt.system}\n\nAnswer with only a JSON object matching this JSON Schema, no other text:\n${JSON.stringify(schema)}`;
    const messages: ChatTurn[] = [
      { role: 'system', content: system },
      { role: 'user', content: prompt.user },
    ];
    const { result } = await this.registry.withFallbacks(name, (model, definition) =>
      model.generate({
        messages,
        maxTokens: Math.min(prompt.maxTokens ?? definition.maxTokens, definition.maxTokens),
        temperature: prompt.temperature,
        signal: this.signal,
        fairnessKey: this.attribution.accountId,
        attribution: this.attribution,
        ...(schema === undefined ? {} : { responseSchema: schema }),
      }),
    );
    this.tokensUsed += result.usage.promptTokens + result.usage.completionTokens;
    return { text: result.text };
  }
}
