// Small pieces every page uses: a page heading, an error alert, the latest action's error, and
// seeding a form from server data.
import { Alert, Stack, Title } from '@mantine/core';
import { useEffect, useState, type ReactNode } from 'react';
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

/**
 * The error of whichever action ran last (by `submittedAt`), so that starting another action clears
 * the message the previous one left, as one error area for several mutations.
 */
export function latestError(
  ...actions: readonly { error: unknown; submittedAt: number }[]
): unknown {
  let latest: { error: unknown; submittedAt: number } | undefined;
  for (const action of actions) {
    if (latest === undefined || action.submittedAt > latest.submittedAt) latest = action;
  }
  return latest?.error ?? null;
}

/**
 * Copies server data into a form's own state once per `key` (null: nothing to copy), from data fetched
 * since the component started watching that key: an older cached copy could undo a save made since.
 * Runs while rendering, as React advises for state that follows a prop, so no stale frame is painted.
 */
export function useSeed<T>(
  key: string | null,
  query: { data: T | undefined; isFetchedAfterMount: boolean },
  apply: (data: T) => void,
): void {
  const [seeded, setSeeded] = useState<string | null>(null);
  if (key === null) {
    // Nothing selected: the next selection, even the same one again, is seeded anew.
    if (seeded !== null) setSeeded(null);
  } else if (key !== seeded && query.data !== undefined && query.isFetchedAfterMount) {
    setSeeded(key);
    apply(query.data);
  }
}

export function formatDate(value: string | null | undefined): string {
  if (value === null || value === undefined) return '—';
  return new Date(value).toLocaleString();
}
