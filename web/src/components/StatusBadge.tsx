// The status of an execution, a stage or a step as a filled badge, one colour per status wherever it
// is shown, each with enough contrast for its text.
import { Badge, type BadgeProps } from '@mantine/core';

const colors = new Map([
  ['completed', 'teal.9'],
  ['approved', 'teal.9'],
  ['failed', 'red.9'],
  ['rejected', 'red.9'],
  ['running', 'blue.9'],
  // Amber stands out from the blue of a running run: a person is needed. autoContrast gives it
  // dark text (white on amber is below 4.5:1).
  ['waiting_for_approval', 'yellow.5'],
  // A call its instance was stopped in waits for a person too.
  ['interrupted', 'yellow.5'],
]);

export function StatusBadge({ status, ...props }: { status: string } & Omit<BadgeProps, 'color'>) {
  return (
    <Badge
      variant="filled"
      color={colors.get(status) ?? 'gray.8'}
      autoContrast
      data-status={status}
      {...props}
    >
      {status.replaceAll('_', ' ')}
    </Badge>
  );
}
