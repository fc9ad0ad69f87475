// Who is logged in: the session from GET /v1/auth/me, login with a key and logout.
import { useQueryClient } from '@tanstack/react-query';
import {
  createContext,
  useCallback,
  useContext,
  useEffect,
  useMemo,
  useState,
  type ReactNode,
} from 'react';
import { api, onUnauthorized, setCsrfToken, unwrap, type paths } from './api/client';

export type Principal =
  paths['/v1/auth/me']['get']['responses'][200]['content']['application/json'];

interface AuthState {
  principal: Principal | null;
  loading: boolean;
  login: (apiKey: string) => Promise<void>;
  logout: () => Promise<void>;
  hasScope: (scope: string) => boolean;
}

const AuthContext = createContext<AuthState | null>(null);

export function AuthProvider({ children }: { children: ReactNode }) {
  const [principal, setPrincipal] = useState<Principal | null>(null);
  const [loading, setLoading] = useState(true);
  const queryClient = useQueryClient();

  // Whatever was read for the previous session is not shown to the next one.
  const accept = useCallback(
    (next: Principal | null) => {
      setCsrfToken(next?.session?.csrf_token ?? null);
      queryClient.clear();
      setPrincipal(next);
    },
    [queryClient],
  );

  useEffect(() => {
    let cancelled = false;
    api
      .GET('/v1/auth/me')
      .then((result) => {
        if (!cancelled) accept(result.data ?? null);
      })
      .catch(() => {
        if (!cancelled) accept(null);
      })
      .finally(() => {
        if (!cancelled) setLoading(false);
      });
    const stop = onUnauthorized(() => accept(null));
    return () => {
      cancelled = true;
      stop();
    };
  }, [accept]);

  const login = useCallback(
    async (apiKey: string) => {
      accept(unwrap(await api.POST('/v1/auth/login', { body: { api_key: apiKey } })));
    },
    [accept],
  );

  const logout = useCallback(async () => {
    const ended = await api.POST('/v1/auth/logout');
    accept(null);
    // A single-sign-on person is signed out at the identity provider too, which sends them back.
    const providerLogout = ended.data?.end_session_url ?? null;
    if (providerLogout !== null) window.location.assign(providerLogout);
  }, [accept]);

  const value = useMemo<AuthState>(
    () => ({
      principal,
      loading,
      login,
      logout,
      hasScope: (scope) =>
        principal !== null &&
        (principal.scopes.includes('admin') || principal.scopes.includes(scope as never)),
    }),
    [principal, loading, login, logout],
  );
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}

export function useAuth(): AuthState {
  const state = useContext(AuthContext);
  if (state === null) throw new Error('useAuth outside AuthProvider');
  return state;
}
