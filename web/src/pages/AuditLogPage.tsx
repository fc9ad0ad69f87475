// The audit log: every administrative change of the account (all accounts' for the platform
// owner's admins), newest first, filtered by action, target type and dates, a page at a time; each
// record's changed fields before and after on demand.
import {
  Button,
  Code,
  Group,
  Pagination,
  Select,
  Stack,
  Table,
  Text,
  TextInput,
} from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap, type components } from '../api/client';
import { ErrorAlert, formatDate, Page } from '../components/common';

type AuditRecord = components['schemas']['AuditRecord'];

const pageSize = 50;

/** The actions docs/audit.md lists. */
const actions = [
  'account.create',
  'api_key.create',
  'api_key.revoke',
  'budget.create',
  'budget.update',
  'budget.delete',
  'routing_policy.create',
  'routing_policy.update',
  'routing_policy.delete',
  'routing_feedback.create',
  'agent.create',
  'agent.update',
  'agent.delete',
  'pipeline.create',
  'pipeline.update',
  'pipeline.delete',
  'knowledge_base.create',
  'knowledge_base.delete',
  'knowledge_document.create',
  'knowledge_document.delete',
  'execution.approve',
  'execution.reject',
  'auth.login',
  'auth.login_failed',
  'auth.logout',
];

const targetTypes = [...new Set(actions.map((action) => action.split('.')[0]!))].map((type) =>
  type === 'auth' ? 'session' : type,
);

interface Filters {
  action: string | null;
  targetType: string | null;
  /** `YYYY-MM-DD`, the start of that day (local time). */
  from: string;
  /** `YYYY-MM-DD`, through the end of that day (local time). */
  to: string;
}

function dayStart(day: string, plusDays = 0): string | undefined {
  if (day === '') return undefined;
  const date = new Date(`${day}T00:00:00`);
  if (Number.isNaN(date.getTime())) return undefined;
  date.setDate(date.getDate() + plusDays);
  return date.toISOString();
}

function actorText(record: AuditRecord): string {
  const { actor } = record;
  if (actor.kind === 'user') return `${actor.user ?? 'user'} (single sign-on)`;
  if (actor.kind === 'session') return `${actor.key_id ?? ''} via session ${actor.session ?? ''}`;
  if (actor.kind === 'key') return actor.key_id ?? 'key';
  return actor.kind;
}

function RecordRow({ record, showAccount }: { record: AuditRecord; showAccount: boolean }) {
  const [open, setOpen] = useState(false);
  const detailId = `audit-${record.id}`;
  return (
    <>
      <Table.Tr>
        <Table.Td>{formatDate(record.at)}</Table.Td>
        {showAccount && <Table.Td>{record.account_id}</Table.Td>}
        <Table.Td>
          <Code>{record.action}</Code>
        </Table.Td>
        <Table.Td>
          {record.target.type}
          {record.target.id === null ? '' : ` ${record.target.id}`}
        </Table.Td>
        <Table.Td>{actorText(record)}</Table.Td>
        <Table.Td>{record.ip ?? '—'}</Table.Td>
        <Table.Td>
          {record.changes === null ? (
            '—'
          ) : (
            <Button
              variant="subtle"
              size="xs"
              aria-expanded={open}
              aria-controls={detailId}
              onClick={() => setOpen((value) => !value)}
            >
              {open ? 'Hide' : 'Show'}
            </Button>
          )}
        </Table.Td>
      </Table.Tr>
      {open && record.changes !== null && (
        <Table.Tr id={detailId}>
          <Table.Td colSpan={showAccount ? 7 : 6}>
            <Group align="flex-start" grow>
              <Stack gap={4}>
                <Text size="sm" fw={600}>
                  Before
                </Text>
                <Code block>{JSON.stringify(record.changes.before, null, 2)}</Code>
              </Stack>
              <Stack gap={4}>
                <Text size="sm" fw={600}>
                  After
                </Text>
                <Code block>{JSON.stringify(record.changes.after, null, 2)}</Code>
              </Stack>
            </Group>
            <Text size="xs" c="dimmed" mt={4}>
              #{record.seq} · hash {record.hash.slice(0, 16)}… · previous{' '}
              {record.prev_hash.slice(0, 16)}…
            </Text>
          </Table.Td>
        </Table.Tr>
      )}
    </>
  );
}

/** The action, target type and date filters. */
function FilterBar({
  filters,
  onChange,
}: {
  filters: Filters;
  onChange: (next: Partial<Filters>) => void;
}) {
  return (
    <Group align="flex-end" wrap="wrap">
      <Select
        label="Action"
        placeholder="Any action"
        data={actions}
        value={filters.action}
        onChange={(value) => onChange({ action: value })}
        clearable
        searchable
      />
      <Select
        label="Target type"
        placeholder="Any target"
        data={targetTypes}
        value={filters.targetType}
        onChange={(value) => onChange({ targetType: value })}
        clearable
      />
      <TextInput
        label="From"
        type="date"
        value={filters.from}
        onChange={(event) => onChange({ from: event.currentTarget.value })}
      />
      <TextInput
        label="To"
        type="date"
        value={filters.to}
        onChange={(event) => onChange({ to: event.currentTarget.value })}
      />
    </Group>
  );
}

function RecordsTable({ records }: { records: AuditRecord[] }) {
  // The platform owner's admins see several accounts' records: then the account is a column.
  const showAccount = new Set(records.map((record) => record.account_id)).size > 1;
  return (
    <Table.ScrollContainer minWidth={800}>
      <Table aria-label="Audit records">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Time</Table.Th>
            {showAccount && <Table.Th>Account</Table.Th>}
            <Table.Th>Action</Table.Th>
            <Table.Th>Target</Table.Th>
            <Table.Th>Who</Table.Th>
            <Table.Th>Address</Table.Th>
            <Table.Th>Changes</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {records.map((record) => (
            <RecordRow key={record.id} record={record} showAccount={showAccount} />
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}

/** One page of the records under `filters`. */
function useAuditRecords(filters: Filters, page: number) {
  const from = dayStart(filters.from);
  const to = dayStart(filters.to, 1);
  return useQuery({
    queryKey: ['audit-log', filters, page],
    placeholderData: keepPreviousData,
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/audit-log', {
          params: {
            query: {
              limit: pageSize,
              offset: (page - 1) * pageSize,
              ...(filters.action === null ? {} : { action: filters.action }),
              ...(filters.targetType === null ? {} : { target_type: filters.targetType }),
              ...(from === undefined ? {} : { from }),
              ...(to === undefined ? {} : { to }),
            },
          },
        }),
      ),
  });
}

export default function AuditLogPage() {
  const [filters, setFilters] = useState<Filters>({
    action: null,
    targetType: null,
    from: '',
    to: '',
  });
  const [page, setPage] = useState(1);
  const query = useAuditRecords(filters, page);
  const records = query.data?.records ?? [];
  const pages = Math.max(1, Math.ceil((query.data?.total ?? 0) / pageSize));
  return (
    <Page title="Audit log">
      <Text size="sm" c="dimmed">
        Every administrative change and login, newest first. Records are hash-chained per account:
        <Code>npm run audit -- verify</Code> checks that none was changed or deleted.
      </Text>
      <FilterBar
        filters={filters}
        onChange={(next) => {
          setFilters((current) => ({ ...current, ...next }));
          setPage(1);
        }}
      />
      <ErrorAlert error={query.error} title="The audit log could not be read" />
      {query.data !== undefined && records.length === 0 && (
        <Text>No records match these filters.</Text>
      )}
      {records.length > 0 && <RecordsTable records={records} />}
      {pages > 1 && (
        <Pagination
          total={pages}
          value={page}
          onChange={setPage}
          getControlProps={(control) => ({ 'aria-label': `${control} page` })}
        />
      )}
    </Page>
  );
}
