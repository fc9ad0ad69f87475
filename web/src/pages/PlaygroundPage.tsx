// Try a model: pick it (or `auto` routing), a template and its variables, temperature and max_tokens;
// the answer streams in, is rendered through the layout engine, and can be rated.
import {
  Badge,
  Button,
  Card,
  Group,
  NumberInput,
  Paper,
  Rating,
  Select,
  SimpleGrid,
  Slider,
  Stack,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core';
import { useEffect, useState, type FormEvent } from 'react';
import { useSearchParams } from 'react-router';
import { api, ApiCallError, readEventStream, sessionHeaders, unwrap } from '../api/client';
import { Answer } from '../components/Answer';
import { ThumbDownIcon, ThumbUpIcon } from '../components/icons';
import { ErrorAlert, Page, useLoad } from '../components/common';

interface Turn {
  role: 'user' | 'assistant';
  content: string;
  messageId?: string;
  model?: string;
  final: boolean;
}

const userId = 'dashboard';

function Feedback({
  conversationId,
  messageId,
  onGiven,
}: {
  conversationId: string;
  messageId: string;
  onGiven: () => void;
}) {
  const [given, setGiven] = useState<string | null>(null);
  const [rating, setRating] = useState(0);
  const [error, setError] = useState<unknown>(null);

  async function send(feedbackType: 'thumbs_up' | 'thumbs_down' | 'rating', value?: number) {
    setError(null);
    try {
      unwrap(
        await api.POST('/v1/feedback', {
          body: {
            conversation_id: conversationId,
            message_id: messageId,
            feedback_type: feedbackType,
            user_id: userId,
            ...(value === undefined ? {} : { feedback_value: value }),
          },
        }),
      );
      setGiven(feedbackType === 'rating' ? `rated ${value ?? ''}` : feedbackType.replace('_', ' '));
      onGiven();
    } catch (reason) {
      setError(reason);
    }
  }

  return (
    <Stack gap={4}>
      <Group gap="xs">
        <Button
          size="compact-sm"
          variant="default"
          aria-label="Thumbs up"
          onClick={() => void send('thumbs_up')}
        >
          <ThumbUpIcon />
        </Button>
        <Button
          size="compact-sm"
          variant="default"
          aria-label="Thumbs down"
          onClick={() => void send('thumbs_down')}
        >
          <ThumbDownIcon />
        </Button>
        <Rating
          value={rating}
          onChange={(value) => {
            setRating(value);
            void send('rating', value);
          }}
          aria-label="Rate this answer from 1 to 5"
        />
        {given && (
          <Text size="sm" role="status">
            Feedback: {given}
          </Text>
        )}
      </Group>
      <ErrorAlert error={error} />
    </Stack>
  );
}

export default function PlaygroundPage() {
  const [searchParams] = useSearchParams();
  const models = useLoad(async () => unwrap(await api.GET('/v1/models')));
  const templates = useLoad(async () => unwrap(await api.GET('/v1/templates')));
  const [model, setModel] = useState<string | null>(null);
  const [templateName, setTemplateName] = useState<string | null>(null);
  const [variables, setVariables] = useState<Record<string, string>>({});
  const [temperature, setTemperature] = useState(0.7);
  const [maxTokens, setMaxTokens] = useState<number | string>('');
  const [message, setMessage] = useState('');
  const [conversationId, setConversationId] = useState<string | null>(
    searchParams.get('conversation'),
  );
  const [turns, setTurns] = useState<Turn[]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [summaryVersion, setSummaryVersion] = useState(0);

  const template = useLoad(
    async () =>
      templateName === null
        ? null
        : unwrap(
            await api.GET('/v1/templates/{template_name}', {
              params: { path: { template_name: templateName } },
            }),
          ),
    [templateName],
  );
  const summary = useLoad(
    async () =>
      conversationId === null
        ? null
        : unwrap(
            await api.GET('/v1/conversations/{conversation_id}/feedback', {
              params: { path: { conversation_id: conversationId } },
            }),
          ),
    [conversationId, summaryVersion],
  );

  // Continuing a conversation from its page: its history is loaded once.
  useEffect(() => {
    const continued = searchParams.get('conversation');
    if (continued === null) return;
    void api
      .GET('/v1/conversations/{conversation_id}/messages', {
        params: {
          path: { conversation_id: continued },
          query: { limit: 100, offset: 0, order: 'asc' },
        },
      })
      .then((result) => {
        if (result.data === undefined) return;
        setTurns(
          result.data.messages
            .filter((item) => item.role === 'user' || item.role === 'assistant')
            .map((item) => ({
              role: item.role as 'user' | 'assistant',
              content: item.content,
              messageId: item.id,
              model: item.model ?? undefined,
              final: true,
            })),
        );
      });
  }, [searchParams]);

  const modelOptions = [
    { value: 'auto', label: 'auto (routing picks the model)' },
    ...(models.data?.models ?? [])
      .filter((item) => item.type === 'chat')
      .map((item) => ({
        value: item.name,
        label: `${item.display_name}${item.available ? '' : ' (unavailable)'}`,
      })),
  ];

  async function ensureConversation(): Promise<string | null> {
    if (conversationId !== null || templateName === null) return conversationId;
    const created = unwrap(
      await api.POST('/v1/conversations', {
        body: { user_id: userId, ...(model === null || model === 'auto' ? {} : { model }) },
      }),
    );
    const id = created.id;
    unwrap(
      await api.POST('/v1/conversations/{conversation_id}/template', {
        params: { path: { conversation_id: id } },
        body: { template_name: templateName, variables },
      }),
    );
    setConversationId(id);
    return id;
  }

  async function send(event: FormEvent) {
    event.preventDefault();
    if (message.trim() === '') return;
    setBusy(true);
    setError(null);
    const content = message;
    setMessage('');
    setTurns((current) => [
      ...current,
      { role: 'user', content, final: true },
      { role: 'assistant', content: '', final: false },
    ]);
    try {
      const id = await ensureConversation();
      const response = await fetch('/v1/chat', {
        method: 'POST',
        credentials: 'same-origin',
        headers: sessionHeaders(),
        body: JSON.stringify({
          user_id: userId,
          messages: [{ role: 'user', content }],
          stream: true,
          temperature,
          ...(id === null ? {} : { conversation_id: id }),
          ...(model === null ? {} : { model }),
          ...(typeof maxTokens === 'number' ? { max_tokens: maxTokens } : {}),
        }),
      });
      if (!response.ok)
        throw new ApiCallError(response.status, await response.json().catch(() => null));
      let answer = '';
      for await (const item of readEventStream(response)) {
        const data = item as {
          type: string;
          content?: string;
          conversation_id?: string;
          message_id?: string;
          model?: string;
          error?: unknown;
        };
        if (data.type === 'start') {
          if (typeof data.conversation_id === 'string') setConversationId(data.conversation_id);
          setTurns((current) =>
            current.map((turn, index) =>
              index === current.length - 1
                ? { ...turn, messageId: data.message_id, model: data.model }
                : turn,
            ),
          );
        } else if (data.type === 'delta') {
          answer += data.content ?? '';
          const snapshot = answer;
          setTurns((current) =>
            current.map((turn, index) =>
              index === current.length - 1 ? { ...turn, content: snapshot } : turn,
            ),
          );
        } else if (data.type === 'error') {
          throw new ApiCallError(502, data);
        }
      }
      setTurns((current) =>
        current.map((turn, index) =>
          index === current.length - 1 ? { ...turn, final: true } : turn,
        ),
      );
      setSummaryVersion((value) => value + 1);
    } catch (reason) {
      setError(reason);
      setTurns((current) => current.filter((turn) => turn.final || turn.content !== ''));
    } finally {
      setBusy(false);
    }
  }

  function newConversation() {
    setConversationId(null);
    setTurns([]);
    setError(null);
  }

  return (
    <Page title="Playground">
      <SimpleGrid cols={{ base: 1, lg: 3 }}>
        <Card withBorder component="section" aria-label="Settings">
          <Stack>
            <Select
              label="Model"
              placeholder="default model"
              data={modelOptions}
              value={model}
              onChange={setModel}
              clearable
            />
            <Select
              label="Template"
              placeholder="none"
              data={(templates.data?.templates ?? []).map((item) => ({
                value: item.name,
                label: item.display_name,
              }))}
              value={templateName}
              onChange={(value) => {
                setTemplateName(value);
                setVariables({});
              }}
              clearable
              disabled={conversationId !== null}
              description={
                conversationId !== null ? 'A template applies to a new conversation.' : undefined
              }
            />
            {template.data?.variable_details.map((variable) => (
              <TextInput
                key={variable.name}
                label={variable.name}
                description={variable.description}
                required={variable.required}
                value={variables[variable.name] ?? ''}
                onChange={(event) => {
                  const value = event.currentTarget.value;
                  setVariables((current) => ({ ...current, [variable.name]: value }));
                }}
              />
            ))}
            <div>
              <Text size="sm" fw={500} id="temperature-label">
                Temperature: {temperature.toFixed(2)}
              </Text>
              <Slider
                min={0}
                max={1}
                step={0.05}
                value={temperature}
                onChange={setTemperature}
                thumbLabel="Temperature"
                aria-labelledby="temperature-label"
              />
            </div>
            <NumberInput
              label="Max tokens"
              placeholder="model default"
              min={1}
              value={maxTokens}
              onChange={setMaxTokens}
            />
            <Group>
              <Button variant="default" onClick={newConversation}>
                New conversation
              </Button>
            </Group>
            {conversationId && (
              <Text size="sm">
                Conversation <code>{conversationId}</code>
              </Text>
            )}
            {summary.data && (
              <Paper withBorder p="xs" aria-live="polite" data-testid="feedback-summary">
                <Text size="sm" fw={600}>
                  Feedback summary
                </Text>
                <Text size="sm">
                  {summary.data.positive_feedback} positive · {summary.data.negative_feedback}{' '}
                  negative · average {summary.data.average_rating.toFixed(2)} ·{' '}
                  {summary.data.messages_with_feedback} of {summary.data.total_messages} messages
                  rated
                </Text>
              </Paper>
            )}
          </Stack>
        </Card>
        <Stack style={{ gridColumn: 'span 2' }}>
          <Card withBorder component="section" aria-label="Conversation" mih={300}>
            <Stack>
              {turns.length === 0 && <Text size="sm">Send a message to start.</Text>}
              {turns.map((turn, index) => (
                <Paper
                  key={index}
                  p="sm"
                  withBorder={turn.role === 'assistant'}
                  bg={turn.role === 'user' ? 'var(--mantine-color-default-hover)' : undefined}
                >
                  <Group gap="xs" mb={4}>
                    <Title order={3} size="h6">
                      {turn.role === 'user' ? 'You' : 'Assistant'}
                    </Title>
                    {turn.model && (
                      <Badge variant="filled" color="gray.8" size="sm">
                        {turn.model}
                      </Badge>
                    )}
                  </Group>
                  {turn.role === 'user' ? (
                    <Text style={{ whiteSpace: 'pre-wrap' }}>{turn.content}</Text>
                  ) : (
                    <div data-testid="assistant-answer" data-final={turn.final}>
                      <Answer content={turn.content} final={turn.final} />
                    </div>
                  )}
                  {turn.role === 'assistant' && turn.final && turn.messageId && conversationId && (
                    <Feedback
                      conversationId={conversationId}
                      messageId={turn.messageId}
                      onGiven={() => setSummaryVersion((value) => value + 1)}
                    />
                  )}
                </Paper>
              ))}
            </Stack>
          </Card>
          <form onSubmit={(event) => void send(event)}>
            <Stack>
              <Textarea
                label="Message"
                autosize
                minRows={2}
                value={message}
                onChange={(event) => setMessage(event.currentTarget.value)}
                onKeyDown={(event) => {
                  if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) void send(event);
                }}
              />
              <ErrorAlert error={error} />
              <Group>
                <Button type="submit" loading={busy}>
                  Send
                </Button>
              </Group>
            </Stack>
          </form>
        </Stack>
      </SimpleGrid>
    </Page>
  );
}
