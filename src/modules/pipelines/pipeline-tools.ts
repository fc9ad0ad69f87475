// The pipelines module's part of the tool registry: the account's pipelines run as tools — by a
// ToolAgent's `pipeline` entry and by a client of /mcp alike — each run to its end through the same
// runner as POST /v1/pipelines/{id}/execute, and recorded as its own execution.
import { NotFoundError } from '../../errors/app-error.js';
import type { OfferedPipeline, PipelinesAsTools } from '../tools/tool-parts.js';
import type { Pipeline } from './pipeline.js';
import type { PipelineRunner } from './pipeline-runner.js';
import type { PipelineService } from './pipeline-service.js';

function offered(pipeline: Pipeline): OfferedPipeline {
  return {
    id: pipeline.id,
    name: pipeline.name,
    description: pipeline.description,
    inputSchema: pipeline.inputSchema,
    stageCount: pipeline.stages.length,
  };
}

export function pipelinesAsTools(
  pipelines: Pick<PipelineService, 'get' | 'exposedAsTools'>,
  runner: Pick<PipelineRunner, 'start'>,
): PipelinesAsTools {
  return {
    async find(accountId, pipelineId) {
      try {
        return offered(await pipelines.get(accountId, pipelineId));
      } catch (error) {
        if (error instanceof NotFoundError) return null;
        throw error;
      }
    },
    async exposed(accountId, limit) {
      return (await pipelines.exposedAsTools(accountId, limit)).map(offered);
    },
    async run(accountId, pipelineId, inputs, { signal, apiKeyId }) {
      const { execution, stagesCompleted } = await runner.start(accountId, pipelineId, inputs, {
        conversationId: null,
        userId: null,
        apiKeyId,
        detach: false,
        signal,
      });
      return {
        executionId: execution.id,
        status: execution.status,
        output: execution.output,
        error: execution.error,
        executionTimeMs: execution.executionTimeMs,
        tokensUsed: execution.tokensUsed,
        stagesCompleted,
      };
    },
  };
}
