// The WebSocket close codes of both channels (also listed by /v1/ws/config and the AsyncAPI document).
/** Close codes the service uses (4xxx mirror HTTP statuses). */
export const closeCodes = {
  /** The key was revoked or expired, or the voice session expired. */
  credentialsInvalid: 4401,
  /** Nothing was received for `idle_timeout_ms`. */
  idleTimeout: 4408,
  /** A message larger than `max_message_bytes` (sent by the WebSocket library). */
  messageTooBig: 1009,
  /** The service is shutting down. */
  goingAway: 1001,
  /** An unexpected failure. */
  internalError: 1011,
} as const;
