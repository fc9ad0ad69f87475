// One conversation: its messages with usage and latency, the feedback summary, archive and delete.
import {
  Badge,
  Button,
  Card,
  Group,
  Modal,
  Paper,
  SimpleGrid,
  Stack,
  Text,
  Title,
} from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import type { paths } from '../api/client';
import { queries } from '../api/queries';
import { Answer } from '../components/Answer';
import { ErrorAlert, Page, formatDate } from '../components/common';
import { useConversationActions } from './conversation-actions';

type Conversation =
  paths['/v1/conversations/{conversation_id}']['get']['responses'][200]['content']['application/json'];
type Message =
  paths['/v1/conversations/{conversation_id}/messages']['get']['responses'][200]['content']['application/json']['messages'][number];

/** Who and what the conversation is, its status, and what can be done with it. */
function ConversationHeader({
  conversation,
  onStatus,
  onDelete,
}: {
  conversation: Conversation;
  onStatus: (status: 'active' | 'archived') => void;
  onDelete: () => void;
}) {
  return (
    <Card withBorder>
      <Group justify="space-between">
        <Stack gap={2}>
          <Text size="sm">
            <code>{conversation.id}</code> · user {conversation.user_id ?? '—'} · model{' '}
            {conversation.model ?? 'default'} · created {formatDate(conversation.created_at)}
          </Text>
          <Group gap="xs">
            <Badge variant="filled" color={conversation.status === 'active' ? 'teal.9' : 'gray.8'}>
              {conversation.status}
            </Badge>
            {conversation.template && (
              <Badge variant="filled" color="gray.8">
                template {conversation.template}
              </Badge>
            )}
          </Group>
        </Stack>
        <Group>
          <Button
            component={Link}
            to={`/playground?conversation=${conversation.id}`}
            variant="default"
          >
            Continue in playground
          </Button>
          {conversation.status === 'active' ? (
            <Button variant="default" onClick={() => onStatus('archived')}>
              Archive
            </Button>
          ) : (
            <Button variant="default" onClick={() => onStatus('active')}>
              Unarchive
            </Button>
          )}
          <Button color="red.9" variant="outline" onClick={onDelete}>
            Delete
          </Button>
        </Group>
      </Group>
    </Card>
  );
}

/** Answers, tokens and mean latency over the messages shown. */
function UsageCard({ messages }: { messages: readonly Message[] }) {
  const totals = messages.reduce(
    (sum, message) => ({
      tokens: sum.tokens + (message.usage?.total_tokens ?? 0),
      latency: sum.latency + (message.latency_ms ?? 0),
      answers: sum.answers + (message.role === 'assistant' ? 1 : 0),
    }),
    { tokens: 0, latency: 0, answers: 0 },
  );
  return (
    <Card withBorder>
      <Title order={3} size="h4">
        Usage
      </Title>
      <Text size="sm">
        {totals.answers} answers · {totals.tokens} tokens · average latency{' '}
        {totals.answers === 0 ? '—' : `${Math.round(totals.latency / totals.answers)} ms`}
      </Text>
    </Card>
  );
}

function MessageView({ message }: { message: Message }) {
  return (
    <Paper withBorder p="sm">
      <Group gap="xs" mb={4}>
        <Title order={3} size="h6">
          {message.role}
        </Title>
        {message.model && <Text size="xs">{message.model}</Text>}
        {message.usage && <Text size="xs">{message.usage.total_tokens} tokens</Text>}
        {message.latency_ms !== null && <Text size="xs">{message.latency_ms} ms</Text>}
        <Text size="xs">{formatDate(message.created_at)}</Text>
      </Group>
      {message.role === 'assistant' ? (
        <Answer content={message.content} final />
      ) : (
        <Text style={{ whiteSpace: 'pre-wrap' }}>{message.content}</Text>
      )}
    </Paper>
  );
}

type Feedback =
  paths['/v1/conversations/{conversation_id}/feedback']['get']['responses'][200]['content']['application/json'];

function FeedbackCard({ feedback }: { feedback: Feedback | undefined }) {
  return (
    <Card withBorder>
      <Title order={3} size="h4">
        Feedback
      </Title>
      {feedback && (
        <Text size="sm">
          {feedback.positive_feedback} positive · {feedback.negative_feedback} negative · average{' '}
          {feedback.average_rating.toFixed(2)}
        </Text>
      )}
    </Card>
  );
}

function DeleteDialog({
  opened,
  onClose,
  onDelete,
}: {
  opened: boolean;
  onClose: () => void;
  onDelete: () => void;
}) {
  return (
    <Modal opened={opened} onClose={onClose} title="Delete this conversation?">
      <Stack>
        <Text>Its messages and feedback are deleted too. This cannot be undone.</Text>
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button color="red.9" onClick={onDelete}>
            Delete
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

export default function ConversationDetailPage() {
  const { conversationId = '' } = useParams();
  const conversation = useQuery(queries.conversation(conversationId));
  const messages = useQuery(queries.conversationMessages(conversationId));
  const feedback = useQuery(queries.conversationFeedback(conversationId));
  const [confirmDelete, setConfirmDelete] = useState(false);
  const actions = useConversationActions(conversationId, () => setConfirmDelete(false));

  return (
    <Page title={conversation.data?.title || 'Conversation'}>
      <ErrorAlert error={conversation.error ?? messages.error} />
      <ErrorAlert error={actions.error} />
      {conversation.data && (
        <ConversationHeader
          conversation={conversation.data}
          onStatus={actions.setStatus}
          onDelete={() => setConfirmDelete(true)}
        />
      )}
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <UsageCard messages={messages.data?.messages ?? []} />
        <FeedbackCard feedback={feedback.data} />
      </SimpleGrid>
      <Stack>
        {messages.data?.messages.map((message) => (
          <MessageView key={message.id} message={message} />
        ))}
      </Stack>
      <DeleteDialog
        opened={confirmDelete}
        onClose={() => setConfirmDelete(false)}
        onDelete={actions.remove}
      />
    </Page>
  );
}
