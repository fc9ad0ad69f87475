// The playground's conversation: its turns, a conversation continued from its page, and sending a
// message whose answer streams in (a new conversation with a template is created first).
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useSearchParams } from 'react-router';
import { api, ApiCallError, readEventStream, sessionHeaders, unwrap } from '../../api/client';
import { keys, queries } from '../../api/queries';
import { useSeed } from '../../components/common';

export const userId = 'dashboard';

export interface Turn {
  role: 'user' | 'assistant';
  content: string;
  messageId?: string;
  model?: string;
  final: boolean;
}

export interface ChatSettings {
  model: string | null;
  templateName: string | null;
  variables: Record<string, string>;
  temperature: number;
  maxTokens: number | string;
}

interface StreamEvent {
  type: string;
  content?: string;
  conversation_id?: string;
  message_id?: string;
  model?: string;
  error?: unknown;
}

/** A change to the answer being written: the last turn. */
const lastTurn =
  (patch: Partial<Turn>) =>
  (turns: Turn[]): Turn[] =>
    turns.map((turn, index) => (index === turns.length - 1 ? { ...turn, ...patch } : turn));

async function ensureConversation(
  conversationId: string | null,
  settings: ChatSettings,
): Promise<string | null> {
  const { model, templateName, variables } = settings;
  if (conversationId !== null || templateName === null) return conversationId;
  const created = unwrap(
    await api.POST('/v1/conversations', {
      body: { user_id: userId, ...(model === null || model === 'auto' ? {} : { model }) },
    }),
  );
  unwrap(
    await api.POST('/v1/conversations/{conversation_id}/template', {
      params: { path: { conversation_id: created.id } },
      body: { template_name: templateName, variables },
    }),
  );
  return created.id;
}

function chatRequest(content: string, conversationId: string | null, settings: ChatSettings) {
  const { model, temperature, maxTokens } = settings;
  return fetch('/v1/chat', {
    method: 'POST',
    credentials: 'same-origin',
    headers: sessionHeaders(),
    body: JSON.stringify({
      user_id: userId,
      messages: [{ role: 'user', content }],
      stream: true,
      temperature,
      ...(conversationId === null ? {} : { conversation_id: conversationId }),
      ...(model === null ? {} : { model }),
      ...(typeof maxTokens === 'number' ? { max_tokens: maxTokens } : {}),
    }),
  });
}

export function useChat(settings: ChatSettings) {
  const queryClient = useQueryClient();
  const [searchParams] = useSearchParams();
  const continued = searchParams.get('conversation');
  const [conversationId, setConversationId] = useState<string | null>(continued);
  const [turns, setTurns] = useState<Turn[]>([]);

  // Continuing a conversation from its page: its history is loaded once.
  const history = useQuery({
    ...queries.conversationMessages(continued ?? ''),
    enabled: continued !== null,
  });
  useSeed(continued, history, (data) =>
    setTurns(
      data.messages
        .filter((item) => item.role === 'user' || item.role === 'assistant')
        .map((item) => ({
          role: item.role as 'user' | 'assistant',
          content: item.content,
          messageId: item.id,
          model: item.model ?? undefined,
          final: true,
        })),
    ),
  );

  const send = useMutation({
    mutationFn: async (content: string) => {
      setTurns((current) => [
        ...current,
        { role: 'user', content, final: true },
        { role: 'assistant', content: '', final: false },
      ]);
      const id = await ensureConversation(conversationId, settings);
      if (id !== conversationId) setConversationId(id);
      const response = await chatRequest(content, id, settings);
      if (!response.ok)
        throw new ApiCallError(response.status, await response.json().catch(() => null));
      let answer = '';
      for await (const item of readEventStream(response)) {
        const data = item as StreamEvent;
        if (data.type === 'start') {
          if (typeof data.conversation_id === 'string') setConversationId(data.conversation_id);
          setTurns(lastTurn({ messageId: data.message_id, model: data.model }));
        } else if (data.type === 'delta') {
          answer += data.content ?? '';
          setTurns(lastTurn({ content: answer }));
        } else if (data.type === 'error') {
          throw new ApiCallError(502, data);
        }
      }
      setTurns(lastTurn({ final: true }));
    },
    onError: () =>
      setTurns((current) => current.filter((turn) => turn.final || turn.content !== '')),
    // The conversation has new messages (the feedback summary counts them) even when the answer
    // broke off.
    onSettled: () => queryClient.invalidateQueries({ queryKey: keys.conversations }),
  });

  function newConversation() {
    setConversationId(null);
    setTurns([]);
    send.reset();
  }

  return {
    conversationId,
    turns,
    busy: send.isPending,
    error: send.error,
    send: send.mutate,
    newConversation,
  };
}
