// The tool connections' configuration (`tools` in the config file): which private addresses MCP
// servers and OpenAPI-described APIs may be at, how long a call may take, how long a server's tool
// list is kept, how much of an answer is read and kept, how many calls a model turn may make and
// how large their arguments may be, and which environment variables may hold their
// tokens. The operator key that seals stored tokens (`TOOL_SECRETS_KEY`) is checked here and read
// when used, never kept in the configuration. The allow-list's entries are checked by the loader.
import Type, { type Static } from 'typebox';
import { Closed, OptionalInteger, type EnvReader } from '../../config/config-kit.js';

export const ToolsFileSchema = Closed({
  allowed_private_targets: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 100 }),
  ),
  call_timeout_ms: OptionalInteger(100, 600_000),
  list_cache_ttl_ms: OptionalInteger(0, 86_400_000),
  max_result_chars: OptionalInteger(100, 1_000_000),
  approval_timeout_ms: OptionalInteger(1000, 30 * 86_400_000),
  max_calls_per_turn: OptionalInteger(1, 256),
  max_argument_bytes: OptionalInteger(1024, 16 * 1024 * 1024),
  max_response_bytes: OptionalInteger(64 * 1024, 256 * 1024 * 1024),
  secret_env_prefix: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z_][A-Za-z0-9_]{1,63}$',
      message: 'must be the start of an environment variable name, at least 2 characters',
    }),
  ),
});

type ToolsFile = Static<typeof ToolsFileSchema>;

/** The environment variable holding the key stored tool tokens are sealed with. */
export const toolSecretsKeyVariable = 'TOOL_SECRETS_KEY';

const SecretsKeyText = Type.String({
  pattern: '^(?:[0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$',
  message: 'must be 64 hexadecimal characters or the base64 of 32 bytes',
});

/** The 32-byte key of `TOOL_SECRETS_KEY`'s text (64 hex digits or base64), or null. */
export function decodeToolSecretsKey(text: string | undefined): Buffer | null {
  if (text === undefined) return null;
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  if (/^[A-Za-z0-9+/]{43}=$/.test(trimmed)) return Buffer.from(trimmed, 'base64');
  return null;
}

/** Checks `TOOL_SECRETS_KEY` when set (a malformed key is a start-up problem, not a 500 later). */
export function readToolsEnv(env: EnvReader): { secretsKeySet: boolean } {
  return { secretsKeySet: env.text(toolSecretsKeyVariable, SecretsKeyText) !== undefined };
}

/** Tool connections: the file's settings, else defaults. */
export function toolsConfig(file: ToolsFile = {}) {
  return {
    allowedPrivateTargets: file.allowed_private_targets ?? [],
    callTimeoutMs: file.call_timeout_ms ?? 30_000,
    listCacheTtlMs: file.list_cache_ttl_ms ?? 300_000,
    maxResultChars: file.max_result_chars ?? 20_000,
    secretEnvPrefix: file.secret_env_prefix ?? 'TOOL_SECRET_',
    /** How long a ToolAgent's call waits for a person's approval before its run fails. */
    approvalTimeoutMs: file.approval_timeout_ms ?? 86_400_000,
    /** Tool calls one model turn may make; the rest are answered to the model as refused. */
    maxCallsPerTurn: file.max_calls_per_turn ?? 16,
    /** Bytes of one call's arguments (as the model wrote them); larger ones are not parsed. */
    maxArgumentBytes: file.max_argument_bytes ?? 64 * 1024,
    /** Bytes of a tool server's answer read at most; past it the call fails unread. */
    maxResponseBytes: file.max_response_bytes ?? 4 * 1024 * 1024,
  };
}
