// Small pieces every page uses: a page heading, an error alert, and a loader for data.
import { Alert, Stack, Title } from '@mantine/core';
import { useCallback, useEffect, useState, type ReactNode } from 'react';
import { errorMessage } from '../api/client';

export function Page({ title, children }: { title: string; children: ReactNode }) {
  useEffect(() => {
    document.title = `${title} · AI Platform`;
  }, [title]);
  return (
    <Stack gap="md">
      <Title order={2}>{title}</Title>
      {children}
    </Stack>
  );
}

export function ErrorAlert({
  error,
  title = 'Something went wrong',
}: {
  error: unknown;
  title?: string;
}) {
  if (error === null || error === undefined) return null;
  return (
    <Alert color="red" title={title} role="alert">
      {errorMessage(error)}
    </Alert>
  );
}

/** Loads data on mount (and on `reload()`), keeping the error for display. */
export function useLoad<T>(load: () => Promise<T>, dependencies: readonly unknown[] = []) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const [generation, setGeneration] = useState(0);
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const run = useCallback(load, dependencies);
  useEffect(() => {
    let cancelled = false;
    setLoading(true);
    run()
      .then((value) => {
        if (!cancelled) {
          setData(value);
          setError(null);
        }
      })
      .catch((reason: unknown) => {
        if (!cancelled) setError(reason);
      })
      .finally(() => {
        if (!cancelled) setLoading(false);
      });
    return () => {
      cancelled = true;
    };
  }, [run, generation]);
  return { data, error, loading, reload: () => setGeneration((value) => value + 1), setData };
}

export function formatDate(value: string | null | undefined): string {
  if (value === null || value === undefined) return '—';
  return new Date(value).toLocaleString();
}
