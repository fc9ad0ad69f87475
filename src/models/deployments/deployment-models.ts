// Small pieces of the registry's deployment and attempt handling: a definition's deployments, and
// a model whose calls all carry the request's budget of upstream calls.
import type { ModelDefinition, RemoteModelDefinition, SecretSource } from '../../config/config.js';
import { remoteUnavailability } from '../providers/remote-models.js';
import type { ChatModel, GenerationRequest } from '../spec.js';
import type { AttemptBudget } from '../upstream/attempt-budget.js';

/** A remote chat model's deployments (none for other models). */
export function deploymentsOf(definition: ModelDefinition): RemoteModelDefinition['deployments'] {
  return 'deployments' in definition ? definition.deployments : [];
}

/** Every field of `T` required, each of its own type (an optional one may be undefined). */
type AllFields<T> = { [K in keyof Required<T>]: T[K] };

/**
 * The request with the budget of upstream calls: every field written out (`AllFields` keeps the
 * list whole), one literal of one shape, not the request spread and a field added (each added
 * field went through V8's runtime on every call; bench/results/gateway-profile.md).
 */
function withBudget(
  request: GenerationRequest,
  attempts: AttemptBudget,
): AllFields<GenerationRequest> {
  return {
    messages: request.messages,
    maxTokens: request.maxTokens,
    temperature: request.temperature,
    signal: request.signal,
    fairnessKey: request.fairnessKey,
    responseSchema: request.responseSchema,
    params: request.params,
    attribution: request.attribution,
    cache: request.cache,
    attempts,
    relay: request.relay,
  };
}

/** The model with the request's budget of upstream calls given to each of its calls. */
export function withAttempts(model: ChatModel, attempts: AttemptBudget): ChatModel {
  return {
    generate: (request) => model.generate(withBudget(request, attempts)),
    stream: (request) => model.stream(withBudget(request, attempts)),
    countTokens: (messages) => model.countTokens(messages),
  };
}

/** Why a model of deployments cannot be used: none of its deployments can (null: one can). */
export function deploymentsUnavailability(
  definition: ModelDefinition,
  secrets: SecretSource,
): string | null {
  const reasons = deploymentsOf(definition).map((deployment) =>
    remoteUnavailability(deployment.definition, secrets),
  );
  return reasons.includes(null) ? null : (reasons[0] ?? null);
}
