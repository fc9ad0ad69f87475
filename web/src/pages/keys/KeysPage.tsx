// API keys of the account: list, create (the secret shown once), revoke after a confirmation;
// accounts for the platform owner's admins.
import { Alert, Button, Code, CopyButton, Group, Modal, Stack, Text } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../../api/client';
import { keys } from '../../api/queries';
import { useAuth } from '../../auth';
import { ErrorAlert, Page } from '../../components/common';
import { Accounts } from './Accounts';
import { CreateKeyForm, type ApiKey } from './CreateKeyForm';
import { KeysTable } from './KeysTable';

function NewKeySecret({
  secret,
  onDismiss,
}: {
  secret: { key: string; record: ApiKey };
  onDismiss: () => void;
}) {
  return (
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
          <Button size="xs" variant="subtle" onClick={onDismiss}>
            I have stored it
          </Button>
        </Group>
      </Stack>
    </Alert>
  );
}

export default function KeysPage() {
  const { principal } = useAuth();
  const queryClient = useQueryClient();
  const [secret, setSecret] = useState<{ key: string; record: ApiKey } | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const revoke = useMutation({
    mutationFn: async (key: ApiKey) =>
      unwrap(await api.DELETE('/v1/api-keys/{key_id}', { params: { path: { key_id: key.id } } })),
    onSuccess: (_, key) => {
      // A revoked key's secret is of no use: its banner goes with it.
      setSecret((current) => (current?.record.id === key.id ? null : current));
      setRevoking(null);
      return queryClient.invalidateQueries({ queryKey: keys.apiKeys });
    },
  });

  function openRevoke(key: ApiKey) {
    revoke.reset();
    setRevoking(key);
  }

  return (
    <Page title="API keys">
      <CreateKeyForm onCreated={(key, record) => setSecret({ key, record })} />
      {secret && <NewKeySecret secret={secret} onDismiss={() => setSecret(null)} />}
      <KeysTable sessionKeyId={principal?.key.id} onRevoke={openRevoke} />
      {principal?.account.kind === 'owner' && <Accounts />}
      <Modal opened={revoking !== null} onClose={() => setRevoking(null)} title="Revoke this key?">
        <Stack>
          <Text>
            Revoke <strong>{revoking?.name}</strong> (<Code>{revoking?.display_key}</Code>)?
            Requests with it will be refused at once. This cannot be undone.
          </Text>
          <ErrorAlert error={revoke.error} />
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setRevoking(null)}>
              Cancel
            </Button>
            <Button color="red.9" onClick={() => revoking !== null && revoke.mutate(revoking)}>
              Revoke key
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Page>
  );
}
