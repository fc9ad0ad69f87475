// A chat model's `deployments` (the same model at several upstreams) turned into definitions: each
// the model's own with what the deployment changes.
import type { DeploymentDefinition, RemoteModelDefinition } from './config.js';
import type { Problems } from './config-kit.js';
import { defaultApiKeyEnv, type ModelEntry } from './model-entry.js';
import { pricingOf } from './model-pricing.js';

/**
 * A model's deployments: each the model's definition with what the deployment changes (provider,
 * model id, URL, key, prices). A deployment is tried once per request (no retries of its own: the
 * next deployment is the retry); `max_attempts` bounds them all.
 */
export function deploymentsOf(
  entry: ModelEntry,
  model: RemoteModelDefinition,
  entryLabel: string,
  problems: Problems,
): DeploymentDefinition[] {
  const names = new Set<string>();
  return (entry.deployments ?? []).flatMap((deployment, index) => {
    const label = `${entryLabel}.deployments[${index}]`;
    const name = deployment.name ?? `deployment-${index + 1}`;
    if (names.has(name)) problems.push(`${label}.name: '${name}' is used twice`);
    names.add(name);
    const provider = deployment.provider ?? model.provider;
    const sameProvider = provider === model.provider;
    const baseUrl = deployment.base_url ?? (sameProvider ? model.baseUrl : null);
    if (provider === 'openai-compatible' && baseUrl === null) {
      problems.push(`${label}.base_url: an openai-compatible deployment needs a base URL`);
      return [];
    }
    const pricing =
      deployment.pricing === undefined
        ? model.pricing
        : pricingOf({ name: entry.name, provider, pricing: deployment.pricing });
    return [
      {
        name,
        weight: deployment.weight ?? 1,
        rpm: deployment.rpm ?? null,
        tpm: deployment.tpm ?? null,
        definition: {
          ...model,
          provider,
          model: deployment.model ?? model.model,
          baseUrl,
          apiKeyEnv:
            deployment.api_key_env ?? (sameProvider ? model.apiKeyEnv : defaultApiKeyEnv[provider]),
          structuredOutputs: sameProvider
            ? model.structuredOutputs
            : provider !== 'openai-compatible',
          maxRetries: 0,
          pricing,
          routing: {
            ...model.routing,
            inputCostPerMillion:
              pricing?.inputPerMtok === null || pricing === null
                ? model.routing.inputCostPerMillion
                : pricing.inputPerMtok / 1_000_000,
            outputCostPerMillion:
              pricing?.outputPerMtok === null || pricing === null
                ? model.routing.outputCostPerMillion
                : pricing.outputPerMtok / 1_000_000,
          },
          deployments: [],
        },
      },
    ];
  });
}
