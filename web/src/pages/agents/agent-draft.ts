// The agent being edited: its fields (copied from the stored agent once per selection, or empty for
// a new one) and saving them.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../../api/client';
import { keys, queries } from '../../api/queries';
import { useSeed } from '../../components/common';

export interface AgentFields {
  name: string;
  description: string;
  agentType: string | null;
  modelId: string | null;
  isPublic: boolean;
  /** Offered as a tool of the account's MCP server (POST /mcp). */
  exposeAsTool: boolean;
  configuration: Record<string, unknown>;
}

const emptyAgent: AgentFields = {
  name: '',
  description: '',
  agentType: null,
  modelId: null,
  isPublic: false,
  exposeAsTool: false,
  configuration: {},
};

/** A ToolAgent acts with its owner's credentials: the API refuses to make one public. */
export const mayBePublic = (agentType: string | null) => agentType !== 'ToolAgent';

/** Creates the agent (null id) or updates it; answers its id. */
async function saveAgent(agentId: string | null, values: AgentFields): Promise<string> {
  const { name, description, configuration, modelId } = values;
  const isPublic = values.isPublic && mayBePublic(values.agentType);
  const exposure = { is_public: isPublic, expose_as_tool: values.exposeAsTool };
  if (agentId !== null) {
    unwrap(
      await api.PATCH('/v1/agents/{agent_id}', {
        params: { path: { agent_id: agentId } },
        body: { name, description, ...exposure, configuration, model_id: modelId },
      }),
    );
    return agentId;
  }
  const created = unwrap(
    await api.POST('/v1/agents', {
      body: {
        name,
        description,
        agent_type: values.agentType ?? '',
        ...exposure,
        configuration,
        ...(modelId === null ? {} : { model_id: modelId }),
      },
    }),
  );
  return created.id;
}

export function useAgentDraft(agentId: string | null, onSaved: (id: string) => void) {
  const queryClient = useQueryClient();
  const agent = useQuery({ ...queries.agent(agentId ?? ''), enabled: agentId !== null });
  const [fields, setFields] = useState<AgentFields>(emptyAgent);
  // Bumped whenever the configuration is replaced as a whole, so the schema form starts over.
  const [formKey, setFormKey] = useState(0);
  const replace = (next: AgentFields) => {
    setFields(next);
    setFormKey((value) => value + 1);
  };

  const save = useMutation({
    mutationFn: (draft: { agentId: string | null; values: AgentFields }) =>
      saveAgent(draft.agentId, draft.values),
    onSuccess: (id) => {
      onSaved(id);
      return queryClient.invalidateQueries({ queryKey: keys.agents });
    },
  });

  // A new selection starts from the stored agent, or from an empty form for a new one.
  useSeed(agentId === null ? null : `agent:${agentId}`, agent, (stored) =>
    replace({
      name: stored.name,
      description: stored.description,
      agentType: stored.agent_type,
      modelId: stored.model_id,
      isPublic: stored.is_public,
      exposeAsTool: stored.expose_as_tool,
      configuration: stored.configuration,
    }),
  );
  const [shownFor, setShownFor] = useState<string | null>(agentId);
  if (agentId !== shownFor) {
    setShownFor(agentId);
    if (agentId === null) replace(emptyAgent);
  }

  return {
    fields,
    formKey,
    change: (patch: Partial<AgentFields>) => setFields((current) => ({ ...current, ...patch })),
    /** A new type brings its configuration's defaults. */
    changeType: (agentType: string | null, configuration: Record<string, unknown>) =>
      replace({ ...fields, agentType, configuration }),
    save: () => save.mutate({ agentId, values: fields }),
    // A refusal belongs to the agent it was for.
    error: save.variables?.agentId === agentId ? save.error : null,
  };
}
