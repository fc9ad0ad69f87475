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

interface KeyFields {
  name: string;
  scopes: string[];
  tier: string | null;
  allowedIps: string;
  expiresAt: string;
}

/** The form's fields as the create body: empty fields are left out, addresses split at commas. */
function createKeyBody(fields: KeyFields) {
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

/** Creates the key from the fields; hands on its secret and record, then refreshes the key list. */
function useCreateKey(fields: KeyFields, onCreated: (secret: string, key: ApiKey) => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async () => unwrap(await api.POST('/v1/api-keys', { body: createKeyBody(fields) })),
    onSuccess: ({ key, ...record }) => {
      onCreated(key, record);
      return queryClient.invalidateQueries({ queryKey: keys.apiKeys });
    },
  });
}

/** The tier select: the configured tiers with their limits; empty means the default tier. */
function TierSelect({
  tiers,
  value,
  onChange,
}: {
  tiers: RateLimitTiers | undefined;
  value: string | null;
  onChange: (tier: string | null) => void;
}) {
  return (
    <Select
      label="Tier"
      description="The key's rate limits; empty: the default tier."
      placeholder={tiers === undefined ? undefined : `default (${tiers.default_tier})`}
      data={tierOptions(tiers)}
      value={value}
      onChange={onChange}
      clearable
    />
  );
}

/** Where the key may be used from, and until when. */
function AccessFields({
  allowedIps,
  expiresAt,
  onAllowedIps,
  onExpiresAt,
}: {
  allowedIps: string;
  expiresAt: string;
  onAllowedIps: (value: string) => void;
  onExpiresAt: (value: string) => void;
}) {
  return (
    <Group grow align="flex-start">
      <TextInput
        label="Allowed IPs"
        description="Comma-separated addresses or CIDR ranges; empty allows every address."
        value={allowedIps}
        onChange={(e) => onAllowedIps(e.currentTarget.value)}
      />
      <TextInput
        label="Expires at"
        description="Optional; local time."
        type="datetime-local"
        value={expiresAt}
        onChange={(e) => onExpiresAt(e.currentTarget.value)}
      />
    </Group>
  );
}

export function CreateKeyForm({ onCreated }: { onCreated: (secret: string, key: ApiKey) => void }) {
  const tiers = useQuery(queries.rateLimitTiers());
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>(['models:read', 'chat:write']);
  const [tier, setTier] = useState<string | null>(null);
  const [allowedIps, setAllowedIps] = useState('');
  const [expiresAt, setExpiresAt] = useState('');
  const create = useCreateKey({ name, scopes, tier, allowedIps, expiresAt }, (secret, key) => {
    onCreated(secret, key);
    setName('');
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
            <TierSelect tiers={tiers.data} value={tier} onChange={setTier} />
          </Group>
          <MultiSelect
            label="Scopes"
            data={[...allScopes]}
            value={scopes}
            onChange={setScopes}
            searchable
          />
          <AccessFields
            allowedIps={allowedIps}
            expiresAt={expiresAt}
            onAllowedIps={setAllowedIps}
            onExpiresAt={setExpiresAt}
          />
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
