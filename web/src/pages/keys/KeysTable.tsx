// The account's keys, a page at a time, with their status, their spend this month (UTC) and a revoke
// button (not for the key of this very session).
import { Badge, Button, Card, Code, Pagination, Table, Title } from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { queries } from '../../api/queries';
import { useAuth } from '../../auth';
import { ErrorAlert, formatDate } from '../../components/common';
import { formatUsd } from '../usage/money';
import type { ApiKey } from './CreateKeyForm';

const pageSize = 20;

/** The start of this calendar month, UTC (budgets' months are UTC too). */
function monthStart(): string {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
}

function statusOf(key: ApiKey): { label: string; color: string } {
  if (key.revoked_at !== null) return { label: 'revoked', color: 'red.9' };
  if (key.expires_at !== null && Date.parse(key.expires_at) <= Date.now()) {
    return { label: 'expired', color: 'red.9' };
  }
  return { label: 'active', color: 'teal.9' };
}

function KeyRow({
  apiKey: key,
  sessionKeyId,
  spend,
  onRevoke,
}: {
  apiKey: ApiKey;
  sessionKeyId: string | undefined;
  /** The key's spend this month; undefined while unknown. */
  spend: string | undefined;
  onRevoke: (key: ApiKey) => void;
}) {
  const status = statusOf(key);
  return (
    <Table.Tr>
      <Table.Td>{key.name}</Table.Td>
      <Table.Td>
        <Code>{key.display_key}</Code>
      </Table.Td>
      <Table.Td>{key.scopes.join(', ') || 'none'}</Table.Td>
      <Table.Td>{key.tier}</Table.Td>
      <Table.Td>{key.allowed_ips.join(', ') || 'any'}</Table.Td>
      <Table.Td>{formatDate(key.expires_at)}</Table.Td>
      <Table.Td>{formatDate(key.last_used_at)}</Table.Td>
      <Table.Td>{spend ?? '—'}</Table.Td>
      <Table.Td>
        <Badge color={status.color} variant="filled">
          {status.label}
        </Badge>
      </Table.Td>
      <Table.Td>
        {key.revoked_at === null && (
          <Button
            size="xs"
            color="red.9"
            variant="outline"
            onClick={() => onRevoke(key)}
            aria-label={`Revoke ${key.name}`}
            disabled={key.id === sessionKeyId}
            title={key.id === sessionKeyId ? 'This session uses this key' : undefined}
          >
            Revoke
          </Button>
        )}
      </Table.Td>
    </Table.Tr>
  );
}

export function KeysTable({
  sessionKeyId,
  onRevoke,
}: {
  sessionKeyId: string | undefined;
  onRevoke: (key: ApiKey) => void;
}) {
  const [page, setPage] = useState(1);
  const keys = useQuery({
    ...queries.apiKeys({ limit: pageSize, offset: (page - 1) * pageSize }),
    placeholderData: keepPreviousData,
  });
  const { hasScope } = useAuth();
  const month = useQuery({
    ...queries.usage({ from: monthStart() }),
    enabled: hasScope('usage:read'),
  });
  const spendOf = (keyId: string): string | undefined => {
    if (month.data === undefined) return undefined;
    const group = month.data.by_key.find((item) => item.key_id === keyId);
    if (group === undefined) return formatUsd(0);
    const { cost_usd: cost, unpriced_requests: unpriced } = group.totals;
    return unpriced === 0 ? formatUsd(cost) : `${formatUsd(cost)} + ${unpriced} unpriced`;
  };

  return (
    <Card withBorder component="section" aria-labelledby="keys-title">
      <Title order={3} size="h4" id="keys-title" mb="sm">
        Keys
      </Title>
      <ErrorAlert error={keys.error} />
      <Table.ScrollContainer minWidth={900}>
        <Table striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Key</Table.Th>
              <Table.Th>Scopes</Table.Th>
              <Table.Th>Tier</Table.Th>
              <Table.Th>IPs</Table.Th>
              <Table.Th>Expires</Table.Th>
              <Table.Th>Last used</Table.Th>
              <Table.Th>Spend this month</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th>
                <span className="skip-link">Actions</span>
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {keys.data?.api_keys.map((key) => (
              <KeyRow
                key={key.id}
                apiKey={key}
                sessionKeyId={sessionKeyId}
                spend={spendOf(key.id)}
                onRevoke={onRevoke}
              />
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      {keys.data && keys.data.total > pageSize && (
        <Pagination
          mt="sm"
          total={Math.ceil(keys.data.total / pageSize)}
          value={page}
          onChange={setPage}
          getControlProps={(control) => ({ 'aria-label': `${control} page` })}
        />
      )}
    </Card>
  );
}
