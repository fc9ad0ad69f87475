// Log in with an API key: it is exchanged for a session cookie and not kept by the browser.
import { Button, Center, Paper, PasswordInput, Stack, Text, Title } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { ErrorAlert } from '../components/common';
import { useAuth } from '../auth';

export function LoginPage() {
  const { login } = useAuth();
  const [key, setKey] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await login(key.trim());
      setKey('');
    } catch (reason) {
      setError(reason);
    } finally {
      setBusy(false);
    }
  }

  return (
    <Center mih="100vh" p="md">
      <Paper withBorder shadow="sm" p="xl" w={440} component="main">
        <form onSubmit={(event) => void submit(event)}>
          <Stack>
            <Title order={1} size="h2">
              Log in
            </Title>
            <Text size="sm">
              Paste an API key. It is exchanged for a session cookie and is not stored in this
              browser.
            </Text>
            <PasswordInput
              label="API key"
              placeholder="sk-…"
              required
              autoComplete="off"
              value={key}
              onChange={(event) => setKey(event.currentTarget.value)}
            />
            <ErrorAlert error={error} title="Login failed" />
            <Button type="submit" loading={busy}>
              Log in
            </Button>
          </Stack>
        </form>
      </Paper>
    </Center>
  );
}
