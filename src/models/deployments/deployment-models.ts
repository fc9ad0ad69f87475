// Small pieces of the registry's deployment and attempt handling: a definition's deployments, and
// a model whose calls all carry the request's budget of upstream calls.
import type { ModelDefinition, RemoteModelDefinition } from '../../config/config.js';
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
