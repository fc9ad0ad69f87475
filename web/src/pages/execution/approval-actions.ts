// Deciding a tool call that waits for approval: approve it (with edited arguments, or as proposed)
// or reject it (with an optional reason). The answer is the execution as it now stands: it replaces
// the page's copy at once, and the page goes on following the run from there.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import { queries } from '../../api/queries';
import { latestError } from '../../components/common';
import type { ExecutionAnswer } from './types';

/**
 * The text of the arguments box as the `arguments` to send: undefined when it is unchanged (the
 * call runs as proposed), an object when it was edited, or an Error saying why it cannot be sent.
 */
export function editedArguments(
  text: string,
  proposed: string,
): Record<string, unknown> | undefined | Error {
  if (text === proposed) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return new Error('The arguments are not valid JSON.');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return new Error('The arguments must be a JSON object, like {"query": "…"}.');
  }
  return value as Record<string, unknown>;
}

/** Approve and reject for one waiting call (`stepId`) of execution `executionId`. */
export function useDecision(executionId: string, stepId: string, onDecided: () => void) {
  const queryClient = useQueryClient();
  const { queryKey } = queries.execution(executionId);
  const path = { execution_id: executionId };
  const settle = (answer: ExecutionAnswer) => {
    queryClient.setQueryData(queryKey, answer);
    onDecided();
    return queryClient.invalidateQueries({ queryKey, exact: true });
  };
  const approve = useMutation({
    mutationFn: async (args: Record<string, unknown> | undefined) =>
      unwrap(
        await api.POST('/v1/executions/{execution_id}/approve', {
          params: { path },
          body: { step_id: stepId, ...(args === undefined ? {} : { arguments: args }) },
        }),
      ),
    onSuccess: settle,
  });
  const reject = useMutation({
    mutationFn: async (reason: string) =>
      unwrap(
        await api.POST('/v1/executions/{execution_id}/reject', {
          params: { path },
          body: { step_id: stepId, ...(reason.trim() === '' ? {} : { reason: reason.trim() }) },
        }),
      ),
    onSuccess: settle,
  });
  return {
    approve,
    reject,
    pending: approve.isPending || reject.isPending,
    error: latestError(approve, reject),
  };
}
