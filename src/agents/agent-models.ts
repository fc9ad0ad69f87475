// How agents use models: text, or JSON matching a schema (constrained where the back-end can,
// always validated, with one repair attempt), through the registry's fallbacks, counting tokens.
import type { JSONSchema7 } from '@ai-sdk/provider';
import type { ModelRegistry } from '../models/model-registry.js';
import { UpstreamError, type ChatTurn } from '../models/spec.js';
import { checkAgainstSchema } from './schema-validator.js';

export interface AgentPrompt {
  system: string;
  user: string;
  maxTokens?: number | undefined;
  temperature?: number | undefined;
}

export class AgentModels {
  /** Tokens used by every call so far (prompt and completion). */
  tokensUsed = 0;

  constructor(
    private readonly registry: ModelRegistry,
    /** The agent's model, or null for the service's default. */
    private readonly requested: string | null,
    private readonly fairnessKey: string,
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

  /** JSON matching `schema`; a reply that does not is sent back once with the problem named. */
  async object<T>(prompt: AgentPrompt, schema: JSONSchema7): Promise<T> {
    const first = await this.call(prompt, schema);
    const parsed = this.parse<T>(first.text, schema);
    if (parsed.ok) return parsed.value;
    const repaired = await this.call(
      {
        ...prompt,
        user: `${prompt.user}\n\nYour previous answer was not valid: ${parsed.problem}\nAnswer again with only a JSON object that matches the schema.`,
      },
      schema,
    );
    const second = this.parse<T>(repaired.text, schema);
    if (second.ok) return second.value;
    throw new UpstreamError(
      'upstream_error',
      `The model's answer did not match the expected structure twice (${second.problem}).`,
      { fallbackWorthy: false },
    );
  }

  private parse<T>(
    text: string,
    schema: JSONSchema7,
  ): { ok: true; value: T } | { ok: false; problem: string } {
    // Models sometimes wrap JSON in a Markdown fence despite being asked not to.
    const trimmed = text
      .trim()
      .replace(/^```(?:json)?\s*/i, '')
      .replace(/\s*```$/, '');
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch {
      return { ok: false, problem: 'it is not JSON' };
    }
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
        fairnessKey: this.fairnessKey,
        ...(schema === undefined ? {} : { responseSchema: schema }),
      }),
    );
    this.tokensUsed += result.usage.promptTokens + result.usage.completionTokens;
    return { text: result.text };
  }
}
