// A tool call waiting for a person's decision: the tool, its proposed arguments in an editable JSON
// box, Approve (with the edited arguments when the box was changed) and Reject (with a reason).
import { Button, Card, Group, Stack, Text, TextInput, Textarea, Title } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { ErrorAlert, formatDate } from '../../components/common';
import { editedArguments, useDecision } from './approval-actions';
import type { StepRecord } from './types';

export function PendingCall({
  executionId,
  step,
  onDecided,
}: {
  executionId: string;
  step: StepRecord;
  onDecided: () => void;
}) {
  const proposed = JSON.stringify(step.arguments ?? {}, null, 2);
  const [text, setText] = useState(proposed);
  const [invalid, setInvalid] = useState<string | null>(null);
  const [reason, setReason] = useState('');
  const decision = useDecision(executionId, step.id, onDecided);
  const titleId = `approval-${step.id}`;

  function approve(event: FormEvent) {
    event.preventDefault();
    const args = editedArguments(text, proposed);
    if (args instanceof Error) {
      setInvalid(args.message);
      return;
    }
    setInvalid(null);
    decision.approve.mutate(args);
  }

  return (
    <Card
      withBorder
      component="section"
      aria-labelledby={titleId}
      data-testid="pending-approval"
      style={{ borderColor: 'var(--mantine-color-yellow-6)', borderWidth: 3 }}
    >
      <form onSubmit={approve}>
        <Stack gap="sm">
          <Title order={3} size="h4" id={titleId}>
            {step.status === 'interrupted' ? 'Interrupted call' : 'Approval needed'}: {step.name}
          </Title>
          <CallExplanation step={step} />
          <Textarea
            label={`Arguments of ${step.name} (JSON)`}
            description="Edit them to run the call with other arguments."
            autosize
            minRows={3}
            maxRows={20}
            spellCheck={false}
            styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
            value={text}
            error={invalid}
            onChange={(event) => {
              setText(event.currentTarget.value);
              setInvalid(null);
            }}
          />
          <TextInput
            label="Reason for rejecting (optional)"
            maxLength={2000}
            value={reason}
            onChange={(event) => setReason(event.currentTarget.value)}
          />
          <ErrorAlert error={decision.error} title="The decision was not recorded" />
          <DecisionButtons decision={decision} reason={reason} />
        </Stack>
      </form>
    </Card>
  );
}

/** Why the call waits (a running call cut off by a stopped instance, or a model's request). */
function CallExplanation({ step }: { step: StepRecord }) {
  return (
    <Text size="sm">
      {step.status === 'interrupted' ? (
        <>
          The call of <strong>{step.name}</strong> was running when its instance stopped: it may or
          may not have taken effect, so it is not made again unless you approve it.
        </>
      ) : (
        <>
          The model wants to call <strong>{step.name}</strong>.
        </>
      )}{' '}
      The run waits until you approve or reject the call
      {step.expires_at === null ? '' : ` (it fails at ${formatDate(step.expires_at)})`}.
    </Text>
  );
}

/** Approve (the form's submit, with the edited arguments) and Reject (with the reason). */
function DecisionButtons({
  decision,
  reason,
}: {
  decision: ReturnType<typeof useDecision>;
  reason: string;
}) {
  return (
    <Group>
      <Button
        type="submit"
        color="teal.9"
        loading={decision.approve.isPending}
        disabled={decision.reject.isPending}
      >
        Approve
      </Button>
      <Button
        color="red.9"
        loading={decision.reject.isPending}
        disabled={decision.approve.isPending}
        onClick={() => decision.reject.mutate(reason)}
      >
        Reject
      </Button>
    </Group>
  );
}
