// The dashboard's server state lives in one TanStack Query cache: reads are cached under keys
// (queries.ts) and writes invalidate the keys they change, so pages no longer reload by hand.
import { QueryClient } from '@tanstack/react-query';
import { ApiCallError } from './client';

export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        // A refusal (4xx) says the same the second time; a lost connection or a 5xx may pass.
        retry: (failures, error) =>
          failures < 1 && !(error instanceof ApiCallError && error.status < 500),
      },
      mutations: { retry: false },
    },
  });
}
