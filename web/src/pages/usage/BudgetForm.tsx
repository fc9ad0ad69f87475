// A budget's form: a new one (scope, its key or end user, period, limit, soft limit), or the
// changes to one (period, limit, soft limit).
import { Button, Group, NumberInput, Select, TextInput } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { queries } from '../../api/queries';
import type { Budget, BudgetPeriod, BudgetScope, NewBudget } from './budgets-api';

const periods: { value: BudgetPeriod; label: string }[] = [
  { value: 'day', label: 'Day (UTC)' },
  { value: 'week', label: 'Week (UTC)' },
  { value: 'month', label: 'Month (UTC)' },
  { value: 'total', label: 'Total (never resets)' },
];

const amount = (value: string | number): number | undefined =>
  value === '' ? undefined : Number(value);

/** Whom a new budget applies to: the account, one of its keys, or an end user. */
function BudgetTarget(props: {
  scope: BudgetScope;
  onScope: (scope: BudgetScope) => void;
  keyId: string | null;
  onKey: (keyId: string | null) => void;
  userId: string;
  onUser: (userId: string) => void;
}) {
  const { scope, onScope, keyId, onKey, userId, onUser } = props;
  const keys = useQuery({
    ...queries.apiKeys({ limit: 100, offset: 0 }),
    enabled: scope === 'key',
  });
  return (
    <>
      <Select
        label="Applies to"
        data={[
          { value: 'account', label: 'The account' },
          { value: 'key', label: 'A key' },
          { value: 'user', label: 'An end user' },
        ]}
        value={scope}
        onChange={(value) => onScope(value ?? 'account')}
        allowDeselect={false}
      />
      {scope === 'key' && (
        <Select
          label="Key"
          required
          data={(keys.data?.api_keys ?? []).map((key) => ({
            value: key.id,
            label: `${key.name} (${key.display_key})`,
          }))}
          value={keyId}
          onChange={onKey}
        />
      )}
      {scope === 'user' && (
        <TextInput
          label="End user"
          required
          maxLength={256}
          value={userId}
          onChange={(event) => onUser(event.currentTarget.value)}
        />
      )}
    </>
  );
}

interface BudgetFormProps {
  /** The budget to change; none: a new one. */
  budget?: Budget;
  busy: boolean;
  onSubmit: (values: NewBudget) => void;
  onCancel?: () => void;
}

export function BudgetForm({ budget, busy, onSubmit, onCancel }: BudgetFormProps) {
  const [scope, setScope] = useState<BudgetScope>(budget?.scope ?? 'account');
  const [keyId, setKeyId] = useState<string | null>(budget?.key_id ?? null);
  const [userId, setUserId] = useState(budget?.user_id ?? '');
  const [period, setPeriod] = useState<BudgetPeriod>(budget?.period ?? 'month');
  const [limit, setLimit] = useState<string | number>(budget?.limit_usd ?? '');
  const [soft, setSoft] = useState<string | number>(budget?.soft_limit_usd ?? '');
  const editing = budget !== undefined;

  function submit(event: FormEvent) {
    event.preventDefault();
    const limitUsd = amount(limit);
    if (limitUsd === undefined) return;
    const softUsd = amount(soft);
    onSubmit({
      scope,
      ...(scope === 'key' && keyId !== null ? { key_id: keyId } : {}),
      ...(scope === 'user' ? { user_id: userId } : {}),
      period,
      limit_usd: limitUsd,
      ...(softUsd === undefined ? {} : { soft_limit_usd: softUsd }),
    });
  }

  return (
    <form onSubmit={submit} aria-label={editing ? 'Change the budget' : 'New budget'}>
      <Group align="flex-end">
        {!editing && (
          <BudgetTarget
            scope={scope}
            onScope={setScope}
            keyId={keyId}
            onKey={setKeyId}
            userId={userId}
            onUser={setUserId}
          />
        )}
        <Select
          label="Period"
          data={periods}
          value={period}
          onChange={(value) => setPeriod(value ?? 'month')}
          allowDeselect={false}
        />
        <NumberInput
          label="Limit (USD)"
          required
          min={0}
          max={1_000_000_000}
          decimalScale={6}
          value={limit}
          onChange={setLimit}
        />
        <NumberInput
          label="Soft limit (USD)"
          min={0}
          max={1_000_000_000}
          decimalScale={6}
          value={soft}
          onChange={setSoft}
        />
        <Button type="submit" loading={busy}>
          {editing ? 'Save' : 'Add budget'}
        </Button>
        {onCancel && (
          <Button variant="default" onClick={onCancel}>
            Cancel
          </Button>
        )}
      </Group>
    </form>
  );
}
