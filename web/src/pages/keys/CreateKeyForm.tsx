// The form that creates an API key in the caller's account: name, tier, scopes, addresses, expiry.
import { Button, Card, Group, MultiSelect, Select, Stack, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap, type components, type paths } from '../../api/client';
import { apiKeyScopes } from '../../api/generated/scopes';
import { keys, queries } from '../../api/queries';
import { ErrorAlert } from '../../components/common';

export type ApiKey = components['schemas']['ApiKey'];
type ScopeName = ApiKey['scopes'][number];

// The service's own scopes, from its OpenAPI document (written out with the API types at build).
const allScopes: readonly ScopeName[] = apiKeyScopes;

type RateLimitTiers =
  paths['/v1/rate-limits/tiers']['get']['responses'][200]['content']['application/json'];

/**
 * The configured tiers as options, each with its limits; those the signed-in key may not give a new
 * key (above its own tier) are shown but cannot be chosen.
 */
function tierOptions(tiers: RateLimitTiers | undefined) {
  return (tiers?.tiers ?? []).map((tier) => ({
    value: tier.name,
    label: `${tier.name} (${tier.requests_per_minute.toLocaleString()}/min, ${tier.requests_per_day.toLocaleString()}/day)${tier.grantable ? '' : ' — above your key’s tier'}`,
    disabled: !tier.grantable,
  }));
}

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
  const tiers = useQuery(queries.rateLimitTiers());
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
            <Select
              label="Tier"
              description="The key's rate limits; empty: the default tier."
              placeholder={
                tiers.data === undefined ? undefined : `default (${tiers.data.default_tier})`
              }
              data={tierOptions(tiers.data)}
              value={tier}
              onChange={setTier}
              clearable
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
          <ErrorAlert error={tiers.error} title="The rate-limit tiers could not be loaded" />
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
