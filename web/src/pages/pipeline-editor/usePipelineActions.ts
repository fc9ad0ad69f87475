// Saving the pipeline (a refusal is shown on the stage its `param` names) and running it, following
// the run's stages live through the execution's event stream.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type Dispatch, type SetStateAction } from 'react';
import { useNavigate } from 'react-router';
import { api, ApiCallError, unwrap } from '../../api/client';
import { keys, queries } from '../../api/queries';
import { latestError } from '../../components/common';
import { orderedStages, pipelineBody, type StageNode } from './stages';

export interface RunState {
  executionId: string;
  status: string;
  output: unknown;
}

interface ExecutionEvent {
  type: string;
  stage?: string;
  status?: string;
  output?: unknown;
}

interface Draft {
  pipelineId: string | undefined;
  name: string;
  description: string;
  /** Offered as a tool of the account's MCP server. */
  exposeAsTool: boolean;
  nodes: StageNode[];
  setNodes: Dispatch<SetStateAction<StageNode[]>>;
}

/** A save-time error names its stage in `param` (stages[2].input_mapping.query). */
function refusedStage(reason: unknown, ordered: StageNode[]): StageNode | undefined {
  const param = reason instanceof ApiCallError ? reason.param : null;
  const index = param === null ? undefined : /^stages\[(\d+)\]/.exec(param)?.[1];
  return index === undefined ? undefined : ordered[Number(index)];
}

function parseRunInputs(text: string): Record<string, unknown> {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error('The run inputs are not valid JSON.');
  }
}

/** Follows a run through the execution's event stream: each stage's status, then the outcome. */
function followExecution(
  executionId: string,
  on: {
    onStage: (stage: string | undefined, status: string) => void;
    onEnd: (status: string, output: unknown) => void;
  },
) {
  const source = new EventSource(`/v1/executions/${executionId}/events`, {
    withCredentials: true,
  });
  source.onmessage = (message: MessageEvent<string>) => {
    const event = JSON.parse(message.data) as ExecutionEvent;
    if (event.type === 'stage-start' || event.type === 'stage-end') {
      on.onStage(
        event.stage,
        event.type === 'stage-start' ? 'running' : (event.status ?? 'completed'),
      );
    } else if (event.type === 'execution-end') {
      source.close();
      on.onEnd(event.status ?? 'completed', event.output ?? null);
    }
  };
  source.onerror = () => source.close();
}

type SetNodes = Draft['setNodes'];

/** Updates every stage's data (its status, its error). */
function markStages(setNodes: SetNodes, update: (node: StageNode) => Partial<StageNode['data']>) {
  setNodes((current) =>
    current.map((node) => ({ ...node, data: { ...node.data, ...update(node) } })),
  );
}

/** Saving: the save itself (answering the pipeline's id), and the note shown once it is saved. */
function useSavePipeline(draft: Draft) {
  const { pipelineId, name, description, exposeAsTool, nodes, setNodes } = draft;
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [saved, setSaved] = useState<string | null>(null);

  /** Saves and answers the pipeline's id; a refusal is also shown on the stage it names. */
  async function savePipeline(): Promise<string> {
    setSaved(null);
    const ordered = orderedStages(nodes);
    const body = { ...pipelineBody(name, description, ordered), expose_as_tool: exposeAsTool };
    try {
      let id = pipelineId;
      if (id === undefined) {
        id = unwrap(await api.POST('/v1/pipelines', { body })).id;
        void navigate(`/pipelines/${id}`, { replace: true });
      } else {
        const path = { pipeline_id: id };
        unwrap(await api.PATCH('/v1/pipelines/{pipeline_id}', { params: { path }, body }));
        markStages(setNodes, () => ({ error: null }));
      }
      setSaved('Saved.');
      void queryClient.invalidateQueries({ queryKey: keys.pipelines });
      return id;
    } catch (reason) {
      const target = refusedStage(reason, ordered);
      if (target !== undefined) {
        const message = (reason as Error).message;
        markStages(setNodes, (node) => ({ error: node.id === target.id ? message : null }));
      }
      throw reason;
    }
  }

  return { saved, savePipeline };
}

/** The latest run: following it live (each stage's status on its node), then its outcome. */
function useRunState(setNodes: SetNodes) {
  const queryClient = useQueryClient();
  const [runState, setRunState] = useState<RunState | null>(null);

  function follow(id: string, executionId: string) {
    setRunState({ executionId, status: 'running', output: null });
    markStages(setNodes, () => ({ status: 'pending' }));
    const executions = queries.pipelineExecutions(id).queryKey;
    void queryClient.invalidateQueries({ queryKey: executions });
    followExecution(executionId, {
      onStage: (stage, status) =>
        setNodes((current) =>
          current.map((node) =>
            node.data.name === stage ? { ...node, data: { ...node.data, status } } : node,
          ),
        ),
      onEnd: (status, output) => {
        setRunState({ executionId, status, output });
        void queryClient.invalidateQueries({ queryKey: executions });
      },
    });
  }

  return { runState, follow };
}

export function usePipelineActions(draft: Draft) {
  const { saved, savePipeline } = useSavePipeline(draft);
  const { runState, follow } = useRunState(draft.setNodes);

  const save = useMutation({ mutationFn: savePipeline });
  const run = useMutation({
    mutationFn: async (runInput: string) => {
      const inputs = parseRunInputs(runInput);
      const id = await savePipeline();
      const started = unwrap(
        await api.POST('/v1/pipelines/{pipeline_id}/execute', {
          params: { path: { pipeline_id: id } },
          body: { ...inputs, async: true } as never,
        }),
      );
      follow(id, started.execution_id);
    },
  });

  return {
    saved,
    runState,
    error: latestError(save, run),
    save: () => save.mutate(),
    run: run.mutate,
  };
}
