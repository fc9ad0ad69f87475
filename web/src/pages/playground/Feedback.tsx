// Rating an answer of the playground: thumbs up or down, or 1 to 5 stars; the conversation's feedback
// summary is read again after each.
import { Button, Group, Rating, Stack, Text } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../../api/client';
import { queries } from '../../api/queries';
import { ErrorAlert } from '../../components/common';
import { ThumbDownIcon, ThumbUpIcon } from '../../components/icons';
import { userId } from './useChat';

type FeedbackType = 'thumbs_up' | 'thumbs_down' | 'rating';

export function Feedback({
  conversationId,
  messageId,
}: {
  conversationId: string;
  messageId: string;
}) {
  const queryClient = useQueryClient();
  const [given, setGiven] = useState<string | null>(null);
  const [rating, setRating] = useState(0);
  const send = useMutation({
    mutationFn: async ({ feedbackType, value }: { feedbackType: FeedbackType; value?: number }) =>
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
      ),
    onSuccess: (_, { feedbackType, value }) => {
      setGiven(feedbackType === 'rating' ? `rated ${value ?? ''}` : feedbackType.replace('_', ' '));
      return queryClient.invalidateQueries({
        queryKey: queries.conversationFeedback(conversationId).queryKey,
      });
    },
  });

  return (
    <Stack gap={4}>
      <Group gap="xs">
        <Button
          size="compact-sm"
          variant="default"
          aria-label="Thumbs up"
          onClick={() => send.mutate({ feedbackType: 'thumbs_up' })}
        >
          <ThumbUpIcon />
        </Button>
        <Button
          size="compact-sm"
          variant="default"
          aria-label="Thumbs down"
          onClick={() => send.mutate({ feedbackType: 'thumbs_down' })}
        >
          <ThumbDownIcon />
        </Button>
        <Rating
          value={rating}
          onChange={(value) => {
            setRating(value);
            send.mutate({ feedbackType: 'rating', value });
          }}
          aria-label="Rate this answer from 1 to 5"
        />
        {given && (
          <Text size="sm" role="status">
            Feedback: {given}
          </Text>
        )}
      </Group>
      <ErrorAlert error={send.error} />
    </Stack>
  );
}
