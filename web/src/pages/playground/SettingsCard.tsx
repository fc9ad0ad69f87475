// The playground's settings: model (or `auto` routing), a template and its variables, temperature,
// max_tokens; the conversation in use and its feedback summary.
import {
  Button,
  Card,
  Group,
  NumberInput,
  Paper,
  Select,
  Slider,
  Stack,
  Text,
  TextInput,
} from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { queries } from '../../api/queries';
import type { ChatSettings } from './useChat';

function FeedbackSummary({ conversationId }: { conversationId: string }) {
  const summary = useQuery(queries.conversationFeedback(conversationId));
  if (summary.data === undefined) return null;
  return (
    <Paper withBorder p="xs" aria-live="polite" data-testid="feedback-summary">
      <Text size="sm" fw={600}>
        Feedback summary
      </Text>
      <Text size="sm">
        {summary.data.positive_feedback} positive · {summary.data.negative_feedback} negative ·
        average {summary.data.average_rating.toFixed(2)} · {summary.data.messages_with_feedback} of{' '}
        {summary.data.total_messages} messages rated
      </Text>
    </Paper>
  );
}

/** `auto`, then the catalog's chat models (those not available now say so). */
function useModelOptions(): { value: string; label: string }[] {
  const models = useQuery(queries.models());
  return [
    { value: 'auto', label: 'auto (routing picks the model)' },
    ...(models.data?.models ?? [])
      .filter((item) => item.type === 'chat')
      .map((item) => ({
        value: item.name,
        label: `${item.display_name}${item.available ? '' : ' (unavailable)'}`,
      })),
  ];
}

/** The template and the variables it declares; `locked` once a conversation has begun. */
function TemplateFields({
  settings,
  onChange,
  locked,
}: {
  settings: ChatSettings;
  onChange: (patch: Partial<ChatSettings>) => void;
  locked: boolean;
}) {
  const templates = useQuery(queries.templates());
  const { templateName, variables } = settings;
  const template = useQuery({
    ...queries.template(templateName ?? ''),
    enabled: templateName !== null,
  });
  return (
    <>
      <Select
        label="Template"
        placeholder="none"
        data={(templates.data?.templates ?? []).map((item) => ({
          value: item.name,
          label: item.display_name,
        }))}
        value={templateName}
        onChange={(value) => onChange({ templateName: value, variables: {} })}
        clearable
        disabled={locked}
        description={locked ? 'A template applies to a new conversation.' : undefined}
      />
      {templateName !== null &&
        template.data?.variable_details.map((variable) => (
          <TextInput
            key={variable.name}
            label={variable.name}
            description={variable.description}
            required={variable.required}
            value={variables[variable.name] ?? ''}
            onChange={(event) =>
              onChange({ variables: { ...variables, [variable.name]: event.currentTarget.value } })
            }
          />
        ))}
    </>
  );
}

export function SettingsCard({
  settings,
  onChange,
  conversationId,
  onNewConversation,
}: {
  settings: ChatSettings;
  onChange: (patch: Partial<ChatSettings>) => void;
  conversationId: string | null;
  onNewConversation: () => void;
}) {
  const modelOptions = useModelOptions();

  return (
    <Card withBorder component="section" aria-label="Settings">
      <Stack>
        <Select
          label="Model"
          placeholder="default model"
          data={modelOptions}
          value={settings.model}
          onChange={(model) => onChange({ model })}
          clearable
        />
        <TemplateFields settings={settings} onChange={onChange} locked={conversationId !== null} />
        <div>
          <Text size="sm" fw={500} id="temperature-label">
            Temperature: {settings.temperature.toFixed(2)}
          </Text>
          <Slider
            min={0}
            max={1}
            step={0.05}
            value={settings.temperature}
            onChange={(temperature) => onChange({ temperature })}
            thumbLabel="Temperature"
            aria-labelledby="temperature-label"
          />
        </div>
        <NumberInput
          label="Max tokens"
          placeholder="model default"
          min={1}
          value={settings.maxTokens}
          onChange={(maxTokens) => onChange({ maxTokens })}
        />
        <Group>
          <Button variant="default" onClick={onNewConversation}>
            New conversation
          </Button>
        </Group>
        {conversationId && (
          <Text size="sm">
            Conversation <code>{conversationId}</code>
          </Text>
        )}
        {conversationId !== null && <FeedbackSummary conversationId={conversationId} />}
      </Stack>
    </Card>
  );
}
