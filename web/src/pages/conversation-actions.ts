// What the conversation page asks of the service besides reading: archive or unarchive the
// conversation, and delete it (then back to the list). One error area shows whichever ran last.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { api, unwrap } from '../api/client';
import { keys } from '../api/queries';
import { latestError } from '../components/common';

export function useConversationActions(conversationId: string, onDeleteFailed: () => void) {
  const navigate = useNavigate();
  const path = { conversation_id: conversationId };
  const queryClient = useQueryClient();

  const setStatus = useMutation({
    mutationFn: async (status: 'active' | 'archived') =>
      unwrap(
        await api.PATCH('/v1/conversations/{conversation_id}', {
          params: { path },
          body: { status },
        }),
      ),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.conversations }),
  });
  const remove = useMutation({
    mutationFn: async () =>
      unwrap(await api.DELETE('/v1/conversations/{conversation_id}', { params: { path } })),
    onSuccess: () => {
      void navigate('/conversations');
      for (const part of ['detail', 'messages', 'feedback']) {
        queryClient.removeQueries({ queryKey: [...keys.conversations, part, conversationId] });
      }
      return queryClient.invalidateQueries({ queryKey: [...keys.conversations, 'list'] });
    },
    onError: onDeleteFailed,
  });

  return {
    setStatus: (status: 'active' | 'archived') => setStatus.mutate(status),
    remove: () => remove.mutate(),
    error: latestError(setStatus, remove),
  };
}
