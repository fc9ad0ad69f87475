// Talk to a model: start a voice session, see the live transcript and the answer, hear the spoken
// answer, and see when the service stopped it because the user spoke over it.
import { Alert, Badge, Button, Card, Group, Stack, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { useFeatureEnabled } from '../../api/queries';
import { ChatModelSelect } from '../../components/ChatModelSelect';
import { ErrorAlert, Page } from '../../components/common';
import { useVoiceSession } from './useVoiceSession';

export default function VoicePage() {
  const enabled = useFeatureEnabled('voice_chat');
  const [model, setModel] = useState<string | null>(null);
  const session = useVoiceSession();
  const { state } = session;

  return (
    <Page title="Voice">
      {enabled === false && (
        <Alert color="yellow" title="Voice is not enabled" role="status">
          GET /v1/features reports voice_chat off: this build has no speech engines, or none is
          available.
        </Alert>
      )}
      <ErrorAlert error={session.error} />
      <Card withBorder>
        <Group align="flex-end">
          <ChatModelSelect value={model} onChange={setModel} disabled={state !== 'idle'} />
          {state === 'idle' ? (
            <Button onClick={() => void session.start(model)} disabled={enabled !== true}>
              Start talking
            </Button>
          ) : (
            <Button color="red.9" onClick={session.stop}>
              Stop
            </Button>
          )}
          <Badge
            variant="filled"
            color={state === 'live' ? 'teal.9' : 'gray.8'}
            data-testid="voice-state"
          >
            {state}
          </Badge>
          {session.speaking && (
            <Badge variant="filled" color="blue.9">
              speaking
            </Badge>
          )}
          {session.interrupted > 0 && (
            <Text size="sm" data-testid="interruptions">
              Interrupted {session.interrupted} time(s)
            </Text>
          )}
        </Group>
      </Card>
      <Card withBorder component="section" aria-labelledby="transcript-title">
        <Title order={3} size="h4" id="transcript-title" mb="xs">
          Transcript
        </Title>
        <Stack gap="xs" aria-live="polite" data-testid="voice-transcript">
          {session.lines.length === 0 && <Text size="sm">Say something after starting.</Text>}
          {session.lines.map((line, index) => (
            <Text key={index} data-who={line.who} fs={line.final ? undefined : 'italic'}>
              <strong>{line.who === 'you' ? 'You' : 'Assistant'}:</strong> {line.text}
            </Text>
          ))}
        </Stack>
      </Card>
    </Page>
  );
}
