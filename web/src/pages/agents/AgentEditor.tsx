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
import { useQuery } from '@tanstack/react-query';
import type { FormEvent } from 'react';
import { queries } from '../../api/queries';
import { ChatModelSelect } from '../../components/ChatModelSelect';
import { ErrorAlert } from '../../components/common';
import { SchemaForm, defaultsOf, type JsonSchema } from '../../components/SchemaForm';
import { mayBePublic, useAgentDraft } from './agent-draft';

type AgentType = { configuration_schema: JsonSchema };

function ConfigurationFieldset({
  type,
  formKey,
  value,
  onChange,
}: {
  type: AgentType;
  formKey: number;
  value: Record<string, unknown>;
  onChange: (value: Record<string, unknown>) => void;
}) {
  return (
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
        value={value}
        onChange={onChange}
      />
    </fieldset>
  );
}

/** The agent's type (fixed once created); choosing one starts the configuration from its defaults. */
function TypeSelect({
  types,
  locked,
  value,
  onChange,
}: {
  types: readonly (AgentType & { id: string; name: string })[];
  locked: boolean;
  value: string | null;
  onChange: (type: string | null, configuration: Record<string, unknown>) => void;
}) {
  return (
    <Select
      label="Type"
      required
      disabled={locked}
      data={types.map((item) => ({
        value: item.id,
        label: item.name,
      }))}
      value={value}
      onChange={(next) => {
        const chosen = types.find((item) => item.id === next);
        onChange(next, chosen === undefined ? {} : defaultsOf(chosen.configuration_schema));
      }}
    />
  );
}

export function AgentEditor({
  agentId,
  onSaved,
}: {
  agentId: string | null;
  onSaved: (id: string) => void;
}) {
  const types = useQuery(queries.agentTypes());
  const draft = useAgentDraft(agentId, onSaved);
  const { fields, change } = draft;
  const type = types.data?.agent_types.find((item) => item.id === fields.agentType);

  function submit(event: FormEvent) {
    event.preventDefault();
    draft.save();
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
          <TypeSelect
            types={types.data?.agent_types ?? []}
            locked={agentId !== null}
            value={fields.agentType}
            onChange={draft.changeType}
          />
          {type && <Text size="sm">{type.description}</Text>}
          <ChatModelSelect value={fields.modelId} onChange={(modelId) => change({ modelId })} />
          {mayBePublic(fields.agentType) && (
            <Switch
              label="Public (other accounts may read and run it)"
              checked={fields.isPublic}
              onChange={(e) => change({ isPublic: e.currentTarget.checked })}
            />
          )}
          <Switch
            label="Offer as a tool of this account's MCP server (POST /mcp)"
            checked={fields.exposeAsTool}
            onChange={(e) => change({ exposeAsTool: e.currentTarget.checked })}
          />
          {type && (
            <ConfigurationFieldset
              type={type}
              formKey={draft.formKey}
              value={fields.configuration}
              onChange={(configuration) => change({ configuration })}
            />
          )}
          <ErrorAlert error={draft.error} title="The agent was not saved" />
          <Group>
            <Button type="submit">{agentId === null ? 'Create agent' : 'Save agent'}</Button>
          </Group>
        </Stack>
      </form>
    </Card>
  );
}
