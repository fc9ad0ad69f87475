// Small pieces of the registry's deployment and attempt handling: a definition's deployments, and
// a model whose calls all carry the request's budget of upstream calls.
import type { ModelDefinition, RemoteModelDefinition, SecretSource } from '../../config/config.js';
import { remoteUnavailability } from '../providers/remote-models.js';
import type { ChatModel } from '../spec.js';
import type { AttemptBudget } from '../upstream/attempt-budget.js';

/** A remote chat model's deployments (none for other models). */
export function deploymentsOf(definition: ModelDefinition): RemoteModelDefinition['deployments'] {
  return 'deployments' in definition ? definition.deployments : [];
}

/** The model with the request's budget of upstream calls given to each of its calls. */
export function withAttempts(model: ChatModel, attempts: AttemptBudget): ChatModel {
  return {
    generate: (request) => model.generate({ ...request, attempts }),
    stream: (request) => model.stream({ ...request, attempts }),
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
