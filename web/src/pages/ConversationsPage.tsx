// Conversations of every user of the account, or of one user, with status, order and paging
// filters.
import {
  Anchor,
  Badge,
  Card,
  Group,
  Pagination,
  SegmentedControl,
  Stack,
  Table,
  Text,
  TextInput,
  UnstyledButton,
} from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import type { paths } from '../api/client';
import { queries } from '../api/queries';
import { ErrorAlert, Page, formatDate } from '../components/common';

const pageSize = 20;

type Status = 'active' | 'archived' | 'all';
type Order = 'desc' | 'asc';

function Filters({
  filter,
  onUser,
  onStatus,
  onOrder,
}: {
  filter: { userId: string; status: Status; order: Order };
  onUser: (userId: string) => void;
  onStatus: (status: Status) => void;
  onOrder: (order: Order) => void;
}) {
  return (
    <Card withBorder>
      <Group align="flex-end">
        <TextInput
          label="User"
          description="A user_id; empty: every user."
          placeholder="All users"
          value={filter.userId}
          onChange={(event) => onUser(event.currentTarget.value)}
        />
        <Stack gap={4}>
          <Text size="sm" fw={500} id="status-label">
            Status
          </Text>
          <SegmentedControl
            aria-labelledby="status-label"
            value={filter.status}
            onChange={onStatus}
            data={['active', 'archived', 'all']}
          />
        </Stack>
        <Stack gap={4}>
          <Text size="sm" fw={500} id="order-label">
            Order
          </Text>
          <SegmentedControl
            aria-labelledby="order-label"
            value={filter.order}
            onChange={onOrder}
            data={[
              { value: 'desc', label: 'Newest first' },
              { value: 'asc', label: 'Oldest first' },
            ]}
          />
        </Stack>
      </Group>
    </Card>
  );
}

type ConversationSummary =
  paths['/v1/conversations']['get']['responses'][200]['content']['application/json']['conversations'][number];

/** One conversation; its user's name narrows the list to that user. */
function ConversationRow({
  conversation,
  onUser,
}: {
  conversation: ConversationSummary;
  onUser: (userId: string) => void;
}) {
  return (
    <Table.Tr>
      <Table.Td>
        <Anchor component={Link} to={`/conversations/${conversation.id}`}>
          {conversation.title || conversation.id}
        </Anchor>
      </Table.Td>
      <Table.Td>
        {conversation.user_id === null ? (
          <Text size="sm">—</Text>
        ) : (
          <UnstyledButton
            fz="sm"
            td="underline"
            title={`Only the conversations of ${conversation.user_id}`}
            onClick={() => onUser(conversation.user_id ?? '')}
          >
            {conversation.user_id}
          </UnstyledButton>
        )}
      </Table.Td>
      <Table.Td>
        <Badge variant="filled" color={conversation.status === 'active' ? 'teal.9' : 'gray.8'}>
          {conversation.status}
        </Badge>
      </Table.Td>
      <Table.Td>{conversation.message_count}</Table.Td>
      <Table.Td>{formatDate(conversation.updated_at)}</Table.Td>
    </Table.Tr>
  );
}

export default function ConversationsPage() {
  // Empty: every user's conversations (those made through the API under any user_id too).
  const [userId, setUserId] = useState('');
  const [status, setStatus] = useState<Status>('active');
  const [order, setOrder] = useState<Order>('desc');
  const [page, setPage] = useState(1);
  // The previous list stays on screen while the next filter's loads, as it always did.
  const list = useQuery({
    ...queries.conversations({
      userId,
      status,
      order,
      limit: pageSize,
      offset: (page - 1) * pageSize,
    }),
    placeholderData: keepPreviousData,
  });
  return (
    <Page title="Conversations">
      <Filters
        filter={{ userId, status, order }}
        onUser={(value) => {
          setUserId(value);
          setPage(1);
        }}
        onStatus={(value) => {
          setStatus(value);
          setPage(1);
        }}
        onOrder={setOrder}
      />
      <ErrorAlert error={list.error} />
      <Card withBorder>
        <Table.ScrollContainer minWidth={600}>
          <Table striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Title</Table.Th>
                <Table.Th>User</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Messages</Table.Th>
                <Table.Th>Updated</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.data?.conversations.map((conversation) => (
                <ConversationRow
                  key={conversation.id}
                  conversation={conversation}
                  onUser={(value) => {
                    setUserId(value);
                    setPage(1);
                  }}
                />
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
        {list.data && list.data.conversations.length === 0 && (
          <Text size="sm">No conversations.</Text>
        )}
        {list.data && list.data.total > pageSize && (
          <Pagination
            mt="sm"
            total={Math.ceil(list.data.total / pageSize)}
            value={page}
            onChange={setPage}
            getControlProps={(control) => ({ 'aria-label': `${control} page` })}
          />
        )}
      </Card>
    </Page>
  );
}
