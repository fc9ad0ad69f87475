// What a rate-limit decision says to the client: the windows counted, the contract's 429 when one
// refused, and the RateLimit and OpenAI `x-ratelimit-*` headers (the limiter is rate-limiter.ts).
import { AppError } from '../../errors/app-error.js';

export type WindowName = 'minute' | 'day';
/** Whose count a window is: the key's own, or its account's (all the account's keys together). */
export type LimitScope = 'key' | 'account';

export const windowSeconds: Record<WindowName, number> = { minute: 60, day: 86_400 };

export interface WindowState {
  readonly scope: LimitScope;
  readonly window: WindowName;
  readonly limit: number;
  readonly remaining: number;
  /** Milliseconds until this window starts afresh. */
  readonly resetMs: number;
}

/** The key's minute and day windows, then (when an account is counted) the account's. */
export type DecisionWindows = readonly [WindowState, WindowState, ...WindowState[]];

export type RateLimitDecision =
  | { readonly allowed: true; readonly windows: DecisionWindows }
  | {
      readonly allowed: false;
      readonly windows: DecisionWindows;
      /** The window whose reset is awaited: the later of the exhausted ones. */
      readonly limitedBy: WindowState;
      /** Whole seconds until a request would be allowed again (never an underestimate). */
      readonly retryAfterSeconds: number;
    };

/**
 * The contract's 429 for a refused decision (`details.retry_after` too where asked for);
 * `batchSize`: the refused request was a JSON-RPC batch of that many messages, each counted.
 */
export function rateLimitExceeded(
  decision: Extract<RateLimitDecision, { allowed: false }>,
  options: { retryAfterInDetails?: boolean; batchSize?: number } = {},
): AppError {
  const { limitedBy } = decision;
  const whose =
    limitedBy.scope === 'account'
      ? "this key's account (all its API keys together)"
      : 'this API key';
  const batch =
    options.batchSize === undefined
      ? ''
      : ` A batch of ${options.batchSize} JSON-RPC messages counts as ${options.batchSize} requests${options.batchSize > limitedBy.limit ? ', more than the limit: send smaller batches' : ''}.`;
  return new AppError(
    'rate_limit_exceeded',
    `Rate limit of ${limitedBy.limit} requests per ${limitedBy.window} exceeded for ${whose}.${batch} Retry after ${decision.retryAfterSeconds} s.`,
    {
      details: {
        limit: limitedBy.limit,
        window: limitedBy.window,
        limit_scope: limitedBy.scope,
        reset_at: new Date(Date.now() + limitedBy.resetMs).toISOString(),
        ...(options.retryAfterInDetails === true
          ? { retry_after: decision.retryAfterSeconds }
          : {}),
      },
    },
  );
}

/** A window's name in the RateLimit headers: `minute`, `day`, `account-minute`, `account-day`. */
function headerName(window: WindowState): string {
  return window.scope === 'account' ? `account-${window.window}` : window.window;
}

/**
 * The contract's rate-limit headers for a decision: one RateLimit item per window (the account's
 * after the key's), and OpenAI's `x-ratelimit-*` for the minute window that binds first (the key's
 * or its account's, whichever has fewer requests left).
 */
export function rateLimitHeaders(decision: RateLimitDecision): Record<string, string> {
  const minute = decision.windows
    .filter((window) => window.window === 'minute')
    .reduce((binding, window) => (window.remaining < binding.remaining ? window : binding));
  const headers: Record<string, string> = {
    'ratelimit-policy': decision.windows
      .map(
        (window) => `"${headerName(window)}";q=${window.limit};w=${windowSeconds[window.window]}`,
      )
      .join(', '),
    ratelimit: decision.windows
      .map(
        (window) =>
          `"${headerName(window)}";r=${window.remaining};t=${Math.ceil(window.resetMs / 1000)}`,
      )
      .join(', '),
    'x-ratelimit-limit-requests': String(minute.limit),
    'x-ratelimit-remaining-requests': String(minute.remaining),
    'x-ratelimit-reset-requests': `${Math.ceil(minute.resetMs / 1000)}s`,
  };
  if (!decision.allowed) headers['retry-after'] = String(decision.retryAfterSeconds);
  return headers;
}
