// An EmbeddingModel over an AI SDK provider's embedding model (OpenAI, OpenAI-compatible, Google):
// the SDK's embedMany splits the texts into calls as the provider allows; each call is retried
// and bounded in time by the same block as every other provider call (../upstream/).
import type { EmbeddingModelV3 } from '@ai-sdk/provider';
import type { RemoteModelDefinition } from '../../config/config.js';
import type { EmbeddingModel, EmbeddingResult } from '../spec.js';
import { CallLimits } from '../upstream/call-limits.js';
import { withRetries } from '../upstream/retry.js';
import { describeUpstreamFailure } from './upstream-failure.js';

/** The provider's model with each of its calls retried within the call's limits. */
function retried(
  model: EmbeddingModelV3,
  limits: CallLimits,
  maxRetries: number,
): EmbeddingModelV3 {
  return {
    specificationVersion: 'v3',
    provider: model.provider,
    modelId: model.modelId,
    maxEmbeddingsPerCall: model.maxEmbeddingsPerCall,
    supportsParallelCalls: model.supportsParallelCalls,
    doEmbed: (options) => withRetries(() => model.doEmbed(options), limits, { maxRetries }),
  };
}

export class AiSdkEmbeddingModel implements EmbeddingModel {
  private loaded: Promise<EmbeddingModelV3> | undefined;

  constructor(
    private readonly definition: RemoteModelDefinition,
    /** Builds the provider's model (importing its package) on the first call. */
    private readonly load: () => Promise<EmbeddingModelV3>,
  ) {}

  async embed(texts: readonly string[], signal: AbortSignal): Promise<EmbeddingResult> {
    const limits = new CallLimits(signal, this.definition.timeoutMs);
    try {
      this.loaded ??= this.load();
      const [{ embedMany }, model] = await Promise.all([import('ai'), this.loaded]);
      const result = await embedMany({
        model: retried(model, limits, this.definition.maxRetries),
        values: [...texts],
        // The retries are the ones above, not the SDK's.
        maxRetries: 0,
        abortSignal: limits.signal,
      });
      return { embeddings: result.embeddings, tokens: result.usage.tokens };
    } catch (error) {
      throw limits.explain(error, (cause) => describeUpstreamFailure(this.definition.name, cause));
    } finally {
      limits.dispose();
    }
  }
}
