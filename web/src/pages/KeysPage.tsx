// API keys of the account: list, create (the secret shown once), revoke after a confirmation;
// accounts for the platform owner's admins.
import {
  Alert,
  Autocomplete,
  Badge,
  Button,
  Card,
  Code,
  CopyButton,
  Group,
  Modal,
  MultiSelect,
  Pagination,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { api, unwrap, type components } from '../api/client';
import { useAuth } from '../auth';
import { ErrorAlert, Page, formatDate, useLoad } from '../components/common';

type ApiKey = components['schemas']['ApiKey'];

const allScopes = [
  'chat:read',
  'chat:write',
  'models:read',
  'conversations:read',
  'conversations:write',
  'voice:read',
  'voice:write',
  'agents:read',
  'agents:write',
  'admin',
] as const;
type ScopeName = (typeof allScopes)[number];

const pageSize = 20;

function statusOf(key: ApiKey): { label: string; color: string } {
  if (key.revoked_at !== null) return { label: 'revoked', color: 'red.9' };
  if (key.expires_at !== null && Date.parse(key.expires_at) <= Date.now()) {
    return { label: 'expired', color: 'red.9' };
  }
  return { label: 'active', color: 'teal.9' };
}

function CreateKeyForm({ onCreated }: { onCreated: (secret: string, key: ApiKey) => void }) {
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>(['models:read', 'chat:write']);
  const [tier, setTier] = useState<string | null>(null);
  const [allowedIps, setAllowedIps] = useState('');
  const [expiresAt, setExpiresAt] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const created = unwrap(
        await api.POST('/v1/api-keys', {
          body: {
            name,
            scopes: scopes as ScopeName[],
            ...(tier === null ? {} : { tier }),
            ...(allowedIps.trim() === ''
              ? {}
              : {
                  allowed_ips: allowedIps
                    .split(',')
                    .map((item) => item.trim())
                    .filter(Boolean),
                }),
            ...(expiresAt === '' ? {} : { expires_at: new Date(expiresAt).toISOString() }),
          },
        }),
      );
      const { key, ...record } = created;
      onCreated(key, record);
      setName('');
    } catch (reason) {
      setError(reason);
    } finally {
      setBusy(false);
    }
  }

  return (
    <Card withBorder component="section" aria-labelledby="create-key-title">
      <form onSubmit={(event) => void submit(event)}>
        <Stack>
          <Title order={3} size="h4" id="create-key-title">
            Create a key
          </Title>
          <Group grow align="flex-start">
            <TextInput
              label="Name"
              required
              value={name}
              onChange={(e) => setName(e.currentTarget.value)}
            />
            <Autocomplete
              label="Tier"
              description="A configured rate-limit tier; empty: the default."
              data={['free', 'basic', 'pro', 'enterprise']}
              value={tier ?? ''}
              onChange={(value) => setTier(value.trim() === '' ? null : value.trim())}
            />
          </Group>
          <MultiSelect
            label="Scopes"
            data={[...allScopes]}
            value={scopes}
            onChange={setScopes}
            searchable
          />
          <Group grow align="flex-start">
            <TextInput
              label="Allowed IPs"
              description="Comma-separated addresses or CIDR ranges; empty allows every address."
              value={allowedIps}
              onChange={(e) => setAllowedIps(e.currentTarget.value)}
            />
            <TextInput
              label="Expires at"
              description="Optional; local time."
              type="datetime-local"
              value={expiresAt}
              onChange={(e) => setExpiresAt(e.currentTarget.value)}
            />
          </Group>
          <ErrorAlert error={error} title="The key was not created" />
          <Group>
            <Button type="submit" loading={busy}>
              Create key
            </Button>
          </Group>
        </Stack>
      </form>
    </Card>
  );
}

function Accounts() {
  const accounts = useLoad(async () =>
    unwrap(await api.GET('/v1/accounts', { params: { query: { limit: 100, offset: 0 } } })),
  );
  const [name, setName] = useState('');
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const [error, setError] = useState<unknown>(null);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setError(null);
    try {
      const account = unwrap(await api.POST('/v1/accounts', { body: { name } }));
      setCreated({ name: account.name, key: account.admin_key });
      setName('');
      accounts.reload();
    } catch (reason) {
      setError(reason);
    }
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
        <form onSubmit={(event) => void submit(event)}>
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
        <ErrorAlert error={error} />
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

export default function KeysPage() {
  const { principal } = useAuth();
  const [page, setPage] = useState(1);
  const keys = useLoad(
    async () =>
      unwrap(
        await api.GET('/v1/api-keys', {
          params: { query: { limit: pageSize, offset: (page - 1) * pageSize } },
        }),
      ),
    [page],
  );
  const [secret, setSecret] = useState<{ key: string; record: ApiKey } | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const [revokeError, setRevokeError] = useState<unknown>(null);

  async function revoke() {
    if (revoking === null) return;
    setRevokeError(null);
    try {
      unwrap(
        await api.DELETE('/v1/api-keys/{key_id}', { params: { path: { key_id: revoking.id } } }),
      );
      // A revoked key's secret is of no use: its banner goes with it.
      if (secret?.record.id === revoking.id) setSecret(null);
      setRevoking(null);
      keys.reload();
    } catch (reason) {
      setRevokeError(reason);
    }
  }

  return (
    <Page title="API keys">
      <CreateKeyForm
        onCreated={(key, record) => {
          setSecret({ key, record });
          keys.reload();
        }}
      />
      {secret && (
        <Alert color="yellow" title="Copy the new key now" role="status">
          <Stack gap="xs">
            <Text size="sm">
              This is the only time the key <strong>{secret.record.name}</strong> is shown. Only its
              hash is stored; if you lose it, revoke it and create another.
            </Text>
            <Group>
              <Code data-testid="new-key-secret">{secret.key}</Code>
              <CopyButton value={secret.key}>
                {({ copied, copy }) => (
                  <Button size="xs" variant="default" onClick={copy}>
                    {copied ? 'Copied' : 'Copy key'}
                  </Button>
                )}
              </CopyButton>
              <Button size="xs" variant="subtle" onClick={() => setSecret(null)}>
                I have stored it
              </Button>
            </Group>
          </Stack>
        </Alert>
      )}
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
                <Table.Th>Status</Table.Th>
                <Table.Th>
                  <span className="skip-link">Actions</span>
                </Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {keys.data?.api_keys.map((key) => {
                const status = statusOf(key);
                return (
                  <Table.Tr key={key.id}>
                    <Table.Td>{key.name}</Table.Td>
                    <Table.Td>
                      <Code>{key.display_key}</Code>
                    </Table.Td>
                    <Table.Td>{key.scopes.join(', ') || 'none'}</Table.Td>
                    <Table.Td>{key.tier}</Table.Td>
                    <Table.Td>{key.allowed_ips.join(', ') || 'any'}</Table.Td>
                    <Table.Td>{formatDate(key.expires_at)}</Table.Td>
                    <Table.Td>{formatDate(key.last_used_at)}</Table.Td>
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
                          onClick={() => setRevoking(key)}
                          aria-label={`Revoke ${key.name}`}
                          disabled={key.id === principal?.key.id}
                          title={
                            key.id === principal?.key.id ? 'This session uses this key' : undefined
                          }
                        >
                          Revoke
                        </Button>
                      )}
                    </Table.Td>
                  </Table.Tr>
                );
              })}
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
      {principal?.account.kind === 'owner' && <Accounts />}
      <Modal opened={revoking !== null} onClose={() => setRevoking(null)} title="Revoke this key?">
        <Stack>
          <Text>
            Revoke <strong>{revoking?.name}</strong> (<Code>{revoking?.display_key}</Code>)?
            Requests with it will be refused at once. This cannot be undone.
          </Text>
          <ErrorAlert error={revokeError} />
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setRevoking(null)}>
              Cancel
            </Button>
            <Button color="red.9" onClick={() => void revoke()}>
              Revoke key
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Page>
  );
}
