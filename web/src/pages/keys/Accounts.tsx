// Accounts, for the platform owner's admins: the list, and a new account with its admin key shown once.
import {
  Alert,
  Button,
  Card,
  Code,
  CopyButton,
  Group,
  Stack,
  Table,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../../api/client';
import { keys, queries } from '../../api/queries';
import { ErrorAlert, formatDate } from '../../components/common';

export function Accounts() {
  const queryClient = useQueryClient();
  const accounts = useQuery(queries.accounts());
  const [name, setName] = useState('');
  // Kept apart from the mutation, so that a later failed creation does not hide the shown key.
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const create = useMutation({
    mutationFn: async (accountName: string) =>
      unwrap(await api.POST('/v1/accounts', { body: { name: accountName } })),
    onSuccess: (account) => {
      setCreated({ name: account.name, key: account.admin_key });
      setName('');
      return queryClient.invalidateQueries({ queryKey: keys.accounts });
    },
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    create.mutate(name);
  }

  return (
    <Card withBorder component="section" aria-labelledby="accounts-title">
      <Stack>
        <Title order={3} size="h4" id="accounts-title">
          Accounts
        </Title>
        <ErrorAlert error={accounts.error} />
        <Table>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Id</Table.Th>
              <Table.Th>Created</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {accounts.data?.accounts.map((account) => (
              <Table.Tr key={account.id}>
                <Table.Td>{account.name}</Table.Td>
                <Table.Td>
                  <Code>{account.id}</Code>
                </Table.Td>
                <Table.Td>{formatDate(account.created_at)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
        <form onSubmit={submit}>
          <Group align="flex-end">
            <TextInput
              label="New account name"
              required
              value={name}
              onChange={(e) => setName(e.currentTarget.value)}
            />
            <Button type="submit">Create account</Button>
          </Group>
        </form>
        <ErrorAlert error={create.error} />
        {created && (
          <Alert color="yellow" title={`Admin key of ${created.name}: shown once`}>
            <Group>
              <Code>{created.key}</Code>
              <CopyButton value={created.key}>
                {({ copied, copy }) => (
                  <Button size="xs" variant="default" onClick={copy}>
                    {copied ? 'Copied' : 'Copy'}
                  </Button>
                )}
              </CopyButton>
            </Group>
          </Alert>
        )}
      </Stack>
    </Card>
  );
}
