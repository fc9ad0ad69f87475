// The form that creates an API key in the caller's account: name, tier, scopes, addresses, expiry.
import {
  Autocomplete,
  Button,
  Card,
  Group,
  MultiSelect,
  Stack,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap, type components } from '../../api/client';
import { apiKeyScopes } from '../../api/generated/scopes';
import { keys } from '../../api/queries';
import { ErrorAlert } from '../../components/common';

export type ApiKey = components['schemas']['ApiKey'];
type ScopeName = ApiKey['scopes'][number];

// The service's own scopes, from its OpenAPI document (written out with the API types at build).
const allScopes: readonly ScopeName[] = apiKeyScopes;

// No endpoint publishes the configured tiers yet: these are the service's defaults, offered as
// suggestions only (any configured name may be typed, and the service names the valid ones).
const suggestedTiers = ['free', 'basic', 'pro', 'enterprise'];

/** The form's fields as the create body: empty fields are left out, addresses split at commas. */
function createKeyBody(fields: {
  name: string;
  scopes: string[];
  tier: string | null;
  allowedIps: string;
  expiresAt: string;
}) {
  const { name, scopes, tier, allowedIps, expiresAt } = fields;
  return {
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
  };
}

export function CreateKeyForm({ onCreated }: { onCreated: (secret: string, key: ApiKey) => void }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>(['models:read', 'chat:write']);
  const [tier, setTier] = useState<string | null>(null);
  const [allowedIps, setAllowedIps] = useState('');
  const [expiresAt, setExpiresAt] = useState('');

  const create = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.POST('/v1/api-keys', {
          body: createKeyBody({ name, scopes, tier, allowedIps, expiresAt }),
        }),
      ),
    onSuccess: ({ key, ...record }) => {
      onCreated(key, record);
      setName('');
      return queryClient.invalidateQueries({ queryKey: keys.apiKeys });
    },
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    create.mutate();
  }

  return (
    <Card withBorder component="section" aria-labelledby="create-key-title">
      <form onSubmit={submit}>
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
              data={suggestedTiers}
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
          <ErrorAlert error={create.error} title="The key was not created" />
          <Group>
            <Button type="submit" loading={create.isPending}>
              Create key
            </Button>
          </Group>
        </Stack>
      </form>
    </Card>
  );
}
