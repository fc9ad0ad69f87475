// Create an agent, or edit the selected one: name, type (fixed once created), model, visibility, and
// the configuration form its type's schema describes.
import {
  Button,
  Card,
  Group,
  Select,
  Stack,
  Switch,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../../api/client';
import { keys, queries } from '../../api/queries';
import { ErrorAlert, useSeed } from '../../components/common';
import { SchemaForm, defaultsOf } from '../../components/SchemaForm';

interface AgentFields {
  name: string;
  description: string;
  agentType: string | null;
  modelId: string | null;
  isPublic: boolean;
  configuration: Record<string, unknown>;
}

const emptyAgent: AgentFields = {
  name: '',
  description: '',
  agentType: null,
  modelId: null,
  isPublic: false,
  configuration: {},
};

export function AgentEditor({
  agentId,
  onSaved,
}: {
  agentId: string | null;
  onSaved: (id: string) => void;
}) {
  const queryClient = useQueryClient();
  const types = useQuery(queries.agentTypes());
  const models = useQuery(queries.models());
  const agent = useQuery({ ...queries.agent(agentId ?? ''), enabled: agentId !== null });
  const [fields, setFields] = useState<AgentFields>(emptyAgent);
  // Bumped whenever the configuration is replaced as a whole, so the schema form starts over.
  const [formKey, setFormKey] = useState(0);
  const change = (patch: Partial<AgentFields>) =>
    setFields((current) => ({ ...current, ...patch }));

  const save = useMutation({
    mutationFn: async ({ agentId, values }: { agentId: string | null; values: AgentFields }) => {
      const { name, description, isPublic, configuration, modelId } = values;
      if (agentId !== null) {
        unwrap(
          await api.PATCH('/v1/agents/{agent_id}', {
            params: { path: { agent_id: agentId } },
            body: { name, description, is_public: isPublic, configuration, model_id: modelId },
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
            is_public: isPublic,
            configuration,
            ...(modelId === null ? {} : { model_id: modelId }),
          },
        }),
      );
      return created.id;
    },
    onSuccess: (id) => {
      onSaved(id);
      return queryClient.invalidateQueries({ queryKey: keys.agents });
    },
  });

  // A new selection starts from the stored agent, or from an empty form for a new one.
  useSeed(agentId === null ? null : `agent:${agentId}`, agent, (stored) => {
    setFields({
      name: stored.name,
      description: stored.description,
      agentType: stored.agent_type,
      modelId: stored.model_id,
      isPublic: stored.is_public,
      configuration: stored.configuration,
    });
    setFormKey((value) => value + 1);
  });
  const [shownFor, setShownFor] = useState<string | null>(agentId);
  if (agentId !== shownFor) {
    setShownFor(agentId);
    if (agentId === null) {
      setFields(emptyAgent);
      setFormKey((value) => value + 1);
    }
  }

  // A refusal belongs to the agent it was for.
  const saveError = save.variables?.agentId === agentId ? save.error : null;
  const type = types.data?.agent_types.find((item) => item.id === fields.agentType);

  function submit(event: FormEvent) {
    event.preventDefault();
    save.mutate({ agentId, values: fields });
  }

  return (
    <Card withBorder component="section" aria-labelledby="agent-editor-title">
      <form onSubmit={submit}>
        <Stack>
          <Title order={3} size="h4" id="agent-editor-title">
            {agentId === null ? 'Create an agent' : 'Edit the agent'}
          </Title>
          <TextInput
            label="Name"
            required
            value={fields.name}
            onChange={(e) => change({ name: e.currentTarget.value })}
          />
          <Textarea
            label="Description"
            value={fields.description}
            onChange={(e) => change({ description: e.currentTarget.value })}
          />
          <Select
            label="Type"
            required
            disabled={agentId !== null}
            data={(types.data?.agent_types ?? []).map((item) => ({
              value: item.id,
              label: item.name,
            }))}
            value={fields.agentType}
            onChange={(value) => {
              const chosen = types.data?.agent_types.find((item) => item.id === value);
              change({
                agentType: value,
                configuration: chosen === undefined ? {} : defaultsOf(chosen.configuration_schema),
              });
              setFormKey((current) => current + 1);
            }}
          />
          {type && <Text size="sm">{type.description}</Text>}
          <Select
            label="Model"
            placeholder="default model"
            clearable
            data={(models.data?.models ?? [])
              .filter((item) => item.type === 'chat')
              .map((item) => item.name)}
            value={fields.modelId}
            onChange={(value) => change({ modelId: value })}
          />
          <Switch
            label="Public (other accounts may read and run it)"
            checked={fields.isPublic}
            onChange={(e) => change({ isPublic: e.currentTarget.checked })}
          />
          {type && (
            <fieldset style={{ border: 'none', padding: 0, margin: 0 }}>
              <legend>
                <Text fw={600} size="sm">
                  Configuration
                </Text>
              </legend>
              <SchemaForm
                key={formKey}
                idPrefix="configuration"
                schema={type.configuration_schema}
                value={fields.configuration}
                onChange={(configuration) => change({ configuration })}
              />
            </fieldset>
          )}
          <ErrorAlert error={saveError} title="The agent was not saved" />
          <Group>
            <Button type="submit">{agentId === null ? 'Create agent' : 'Save agent'}</Button>
          </Group>
        </Stack>
      </form>
    </Card>
  );
}
