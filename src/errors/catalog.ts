// The one catalog of error codes: each code's HTTP status and error type, as api-contract.md fixes them.

export const errorCatalog = {
  invalid_json: { status: 400, type: 'invalid_request_error' },
  invalid_parameter: { status: 400, type: 'invalid_request_error' },
  missing_parameter: { status: 400, type: 'invalid_request_error' },
  unknown_template: { status: 400, type: 'invalid_request_error' },
  unknown_model: { status: 400, type: 'invalid_request_error' },
  // Stored in executions only: a pipeline path that resolved to nothing at run time.
  unresolved_path: { status: 400, type: 'invalid_request_error' },
  unknown_message_type: { status: 400, type: 'invalid_request_error' },
  // The Responses API's own (OpenAI's code): a `previous_response_id` that names no stored response.
  previous_response_not_found: { status: 400, type: 'invalid_request_error' },
  missing_api_key: { status: 401, type: 'authentication_error' },
  invalid_api_key: { status: 401, type: 'authentication_error' },
  revoked_api_key: { status: 401, type: 'authentication_error' },
  expired_api_key: { status: 401, type: 'authentication_error' },
  invalid_session: { status: 401, type: 'authentication_error' },
  // Single sign-on: the provider's answer failed a check (state, nonce, issuer, PKCE, signature).
  sso_failed: { status: 401, type: 'authentication_error' },
  insufficient_permissions: { status: 403, type: 'permission_error' },
  ip_not_allowed: { status: 403, type: 'permission_error' },
  feature_disabled: { status: 403, type: 'permission_error' },
  csrf_failed: { status: 403, type: 'permission_error' },
  // Single sign-on: the person's claims map to no account or no scope (deny by default).
  sso_denied: { status: 403, type: 'permission_error' },
  model_forbidden: { status: 403, type: 'permission_error' },
  // A budget applies to the call, and the model has no price for what the call uses.
  unpriced_model: { status: 403, type: 'permission_error' },
  not_found: { status: 404, type: 'not_found_error' },
  method_not_allowed: { status: 405, type: 'invalid_request_error' },
  conflict: { status: 409, type: 'conflict_error' },
  request_timeout: { status: 408, type: 'invalid_request_error' },
  payload_too_large: { status: 413, type: 'invalid_request_error' },
  unsupported_media_type: { status: 415, type: 'invalid_request_error' },
  headers_too_large: { status: 431, type: 'invalid_request_error' },
  malformed_request: { status: 400, type: 'invalid_request_error' },
  rate_limit_exceeded: { status: 429, type: 'rate_limit_error' },
  // A call that would take a budget on its path past its limit (OpenAI's type for spend limits).
  budget_exceeded: { status: 429, type: 'insufficient_quota' },
  // Stored in executions only: the client closed the request before its run finished (nginx's 499).
  aborted: { status: 499, type: 'api_error' },
  internal_error: { status: 500, type: 'api_error' },
  upstream_error: { status: 502, type: 'upstream_error' },
  model_unavailable: { status: 503, type: 'upstream_error' },
  service_unavailable: { status: 503, type: 'api_error' },
  // The budgets' store (Redis, or the database) cannot be reached and budgets do not fail open.
  budgets_unavailable: { status: 503, type: 'api_error' },
  // Stored in executions only: the instance running it stopped (or is stopping) before it finished.
  interrupted: { status: 503, type: 'api_error' },
  // A tool-calling agent's run: stopped by a limit, a person's rejection, or an approval not given in time.
  limit_reached: { status: 422, type: 'invalid_request_error' },
  approval_rejected: { status: 409, type: 'conflict_error' },
  approval_timeout: { status: 408, type: 'invalid_request_error' },
  upstream_timeout: { status: 504, type: 'upstream_error' },
} as const satisfies Record<string, { status: number; type: string }>;

export type ErrorCode = keyof typeof errorCatalog;
export type ErrorType = (typeof errorCatalog)[ErrorCode]['type'];

export const errorCodes = Object.keys(errorCatalog) as ErrorCode[];
