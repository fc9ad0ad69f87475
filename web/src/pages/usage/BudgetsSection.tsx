// The account's budgets on the Usage page: a bar per budget (spent, reserved, limit, when it
// resets), and forms to add, change and delete one. A server without budgets says so.
import { Button, Card, Group, Progress, Stack, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ErrorAlert, formatDate } from '../../components/common';
import { BudgetForm } from './BudgetForm';
import {
  BudgetsUnavailable,
  createBudget,
  deleteBudget,
  listBudgets,
  updateBudget,
  type Budget,
  type NewBudget,
} from './budgets-api';
import { formatUsd } from './money';

const budgetsKey = ['budgets'] as const;

function scopeText(budget: Budget): string {
  if (budget.scope === 'key') return `Key ${budget.key_id ?? ''}`;
  if (budget.scope === 'user') return `End user ${budget.user_id ?? ''}`;
  return 'The account';
}

function BudgetBar({ budget }: { budget: Budget }) {
  const limit = budget.limit_usd;
  const share = (value: number) => (limit <= 0 ? 100 : Math.min(100, (value / limit) * 100));
  const spent = share(budget.spent_usd);
  const reserved = Math.min(100 - spent, share(budget.reserved_usd));
  const label = `${formatUsd(budget.spent_usd)} spent and ${formatUsd(budget.reserved_usd)} reserved of ${formatUsd(limit)}`;
  return (
    <Stack gap={4}>
      <Progress.Root size="lg">
        <Progress.Section
          value={spent}
          color={spent >= 100 ? 'red.9' : 'blue.9'}
          aria-label={`Spent: ${formatUsd(budget.spent_usd)} of ${formatUsd(limit)}`}
        />
        <Progress.Section
          value={reserved}
          color="yellow.6"
          aria-label={`Reserved: ${formatUsd(budget.reserved_usd)} of ${formatUsd(limit)}`}
        />
      </Progress.Root>
      <Text size="sm">
        {label}
        {budget.soft_limit_usd != null && ` · soft limit ${formatUsd(budget.soft_limit_usd)}`}
        {' · '}
        {budget.resets_at === null ? 'never resets' : `resets ${formatDate(budget.resets_at)}`}
      </Text>
    </Stack>
  );
}

function BudgetItem({ budget }: { budget: Budget }) {
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState(false);
  const refresh = () => queryClient.invalidateQueries({ queryKey: budgetsKey });
  const update = useMutation({
    mutationFn: (values: NewBudget) =>
      updateBudget(budget.id, {
        limit_usd: values.limit_usd,
        period: values.period,
        // An emptied soft limit is removed.
        soft_limit_usd: values.soft_limit_usd ?? null,
      }),
    onSuccess: async () => {
      setEditing(false);
      await refresh();
    },
  });
  const remove = useMutation({ mutationFn: () => deleteBudget(budget.id), onSuccess: refresh });
  const title = `${scopeText(budget)} · ${budget.period}`;
  return (
    <Card withBorder component="article" aria-label={`Budget: ${title}`}>
      <Group justify="space-between" mb="xs">
        <Text fw={600}>{title}</Text>
        <Group gap="xs">
          <Button size="xs" variant="default" onClick={() => setEditing((value) => !value)}>
            Edit
          </Button>
          <Button
            size="xs"
            color="red.9"
            variant="outline"
            loading={remove.isPending}
            onClick={() => remove.mutate()}
            aria-label={`Delete the budget: ${title}`}
          >
            Delete
          </Button>
        </Group>
      </Group>
      <BudgetBar budget={budget} />
      <ErrorAlert error={update.error ?? remove.error} />
      {editing && (
        <BudgetForm
          budget={budget}
          busy={update.isPending}
          onSubmit={(values) => update.mutate(values)}
          onCancel={() => setEditing(false)}
        />
      )}
    </Card>
  );
}

export function BudgetsSection() {
  const queryClient = useQueryClient();
  const budgets = useQuery({ queryKey: budgetsKey, queryFn: listBudgets, retry: false });
  const create = useMutation({
    mutationFn: createBudget,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: budgetsKey }),
  });
  const unavailable = budgets.error instanceof BudgetsUnavailable;
  return (
    <Card withBorder component="section" aria-labelledby="budgets-title">
      <Title order={3} size="h4" id="budgets-title" mb="xs">
        Budgets
      </Title>
      {unavailable ? (
        <Text size="sm" data-testid="budgets-unavailable">
          Budgets are not available on this server.
        </Text>
      ) : (
        <Stack>
          <ErrorAlert error={budgets.error ?? create.error} />
          {budgets.data?.length === 0 && <Text size="sm">No budgets yet.</Text>}
          {budgets.data?.map((budget) => (
            <BudgetItem key={budget.id} budget={budget} />
          ))}
          <BudgetForm busy={create.isPending} onSubmit={(values) => create.mutate(values)} />
        </Stack>
      )}
    </Card>
  );
}
