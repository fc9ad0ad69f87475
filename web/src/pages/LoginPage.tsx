// Log in with an API key (exchanged for a session cookie and not kept by the browser), or, when the
// service has single sign-on configured, with the company's identity provider.
import { Button, Center, Divider, Paper, PasswordInput, Stack, Text, Title } from '@mantine/core';
import { useEffect, useState, type FormEvent } from 'react';
import { api } from '../api/client';
import { ErrorAlert } from '../components/common';
import { useAuth } from '../auth';

interface SingleSignOn {
  provider: string;
  loginUrl: string;
}

/** Whether the service offers single sign-on (`GET /v1/auth/oidc`), and where it starts. */
function useSingleSignOn(): SingleSignOn | null {
  const [sso, setSso] = useState<SingleSignOn | null>(null);
  useEffect(() => {
    let cancelled = false;
    api
      .GET('/v1/auth/oidc')
      .then(({ data }) => {
        if (cancelled || data === undefined || !data.enabled || data.login_url === null) return;
        // Back to the page that was asked for, once signed in.
        const here = `${window.location.pathname}${window.location.search}`;
        setSso({
          provider: data.provider ?? 'single sign-on',
          loginUrl: `${data.login_url}?return_to=${encodeURIComponent(here)}`,
        });
      })
      .catch(() => undefined);
    return () => {
      cancelled = true;
    };
  }, []);
  return sso;
}

export function LoginPage() {
  const { login } = useAuth();
  const [key, setKey] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const sso = useSingleSignOn();

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
            {sso !== null && (
              <>
                <Button component="a" href={sso.loginUrl} variant="filled">
                  Sign in with {sso.provider}
                </Button>
                <Divider label="or with an API key" labelPosition="center" />
              </>
            )}
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
