// Try a model: pick it (or `auto` routing), a template and its variables, temperature and max_tokens;
// the answer streams in, is rendered through the layout engine, and can be rated.
import {
  Badge,
  Button,
  Card,
  Group,
  Paper,
  SimpleGrid,
  Stack,
  Text,
  Textarea,
  Title,
} from '@mantine/core';
import { useState, type FormEvent, type KeyboardEvent } from 'react';
import { Answer } from '../../components/Answer';
import { ErrorAlert, Page } from '../../components/common';
import { Feedback } from './Feedback';
import { SettingsCard } from './SettingsCard';
import { useChat, type ChatSettings, type Turn } from './useChat';

function TurnView({ turn, conversationId }: { turn: Turn; conversationId: string | null }) {
  return (
    <Paper
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
        <Feedback conversationId={conversationId} messageId={turn.messageId} />
      )}
    </Paper>
  );
}

export default function PlaygroundPage() {
  const [settings, setSettings] = useState<ChatSettings>({
    model: null,
    templateName: null,
    variables: {},
    temperature: 0.7,
    maxTokens: '',
  });
  const [message, setMessage] = useState('');
  const chat = useChat(settings);

  function send(event: FormEvent | KeyboardEvent) {
    event.preventDefault();
    if (message.trim() === '') return;
    chat.send(message);
    setMessage('');
  }

  return (
    <Page title="Playground">
      <SimpleGrid cols={{ base: 1, lg: 3 }}>
        <SettingsCard
          settings={settings}
          onChange={(patch) => setSettings((current) => ({ ...current, ...patch }))}
          conversationId={chat.conversationId}
          onNewConversation={chat.newConversation}
        />
        <Stack style={{ gridColumn: 'span 2' }}>
          <Card withBorder component="section" aria-label="Conversation" mih={300}>
            <Stack>
              {chat.turns.length === 0 && <Text size="sm">Send a message to start.</Text>}
              {chat.turns.map((turn, index) => (
                <TurnView key={index} turn={turn} conversationId={chat.conversationId} />
              ))}
            </Stack>
          </Card>
          <form onSubmit={send}>
            <Stack>
              <Textarea
                label="Message"
                autosize
                minRows={2}
                value={message}
                onChange={(event) => setMessage(event.currentTarget.value)}
                onKeyDown={(event) => {
                  if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) send(event);
                }}
              />
              <ErrorAlert error={chat.error} />
              <Group>
                <Button type="submit" loading={chat.busy}>
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
