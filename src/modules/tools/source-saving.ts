// What saving an outside tool source (an MCP server, an OpenAPI document) checks and stores: its
// URL within the address policy, `bearer_token_env` under the operator's prefix, the document's
// operations, no header that is the platform's to set, and a given `bearer_token` sealed — or the
// sealed token of the entry it replaces kept. The entry itself was validated against its schema
// already (tool-entries.ts): what is checked here needs the service.
import { InvalidParameterError } from '../../errors/app-error.js';
import type { TargetAllowList } from '../../net/address-policy.js';
import type { Resolver } from '../../net/fetch-target.js';
import { checkToolUrl, PolicyFetchError } from '../../net/policy-fetch.js';
import { OpenApiDocumentError } from './openapi-expander.js';
import { readOpenApiDocument } from './openapi-tools.js';
import type { SecretBox } from './secret-box.js';
import {
  isSourceEntry,
  sealedTokenField,
  type StoredSourceEntry,
  type StoredToolEntry,
} from './tool-entries.js';

/** What saving a source needs of the service. */
export interface SourceSaving {
  readonly allowList: TargetAllowList;
  readonly resolve?: Resolver | undefined;
  /** The prefix of the environment variables a source may read its token from. */
  readonly secretEnvPrefix: string;
  readonly box: SecretBox;
}

/** Headers the platform sets itself (or that carry a session): never an entry's. */
const reservedHeaders = new Set([
  'authorization',
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'cookie',
  'mcp-session-id',
  'mcp-protocol-version',
]);

/** The sealed tokens of the entries being replaced, by type and name. */
export function sealedTokensOf(previous: readonly StoredToolEntry[]): Map<string, string> {
  const sealed = new Map<string, string>();
  for (const entry of previous) {
    if (!isSourceEntry(entry)) continue;
    const token = entry[sealedTokenField];
    if (typeof token === 'string') sealed.set(`${entry.type}\n${entry.name}`, token);
  }
  return sealed;
}

async function checkUrl(url: string, param: string, saving: SourceSaving): Promise<void> {
  try {
    await checkToolUrl(url, {
      allowList: saving.allowList,
      ...(saving.resolve === undefined ? {} : { resolve: saving.resolve }),
    });
  } catch (error) {
    if (!(error instanceof PolicyFetchError)) throw error;
    // A name that does not resolve today may tomorrow: the connection checks it again anyway.
    if (error.reason === 'unreachable') return;
    const hint =
      error.reason === 'blocked_address'
        ? ' (the operator may allow it with tools.allowed_private_targets)'
        : '';
    throw new InvalidParameterError(param, `'${param}': ${error.message}${hint}`);
  }
}

/** The URL (MCP) or the document and where its requests go (OpenAPI), checked. */
async function checkTarget(
  entry: StoredSourceEntry,
  param: string,
  saving: SourceSaving,
): Promise<void> {
  if (entry.type === 'mcp') {
    await checkUrl(entry.url, `${param}.url`, saving);
    return;
  }
  let reading;
  try {
    reading = readOpenApiDocument(entry.document, entry.operations);
  } catch (error) {
    if (!(error instanceof OpenApiDocumentError)) throw error;
    throw new InvalidParameterError(
      `${param}.${error.field}`,
      `'${param}.${error.field}': ${error.message}`,
    );
  }
  if (entry.base_url === undefined && reading.defaultBaseUrl === null) {
    throw new InvalidParameterError(
      `${param}.base_url`,
      `'${param}.base_url' is required: the document's first server gives no absolute http(s) URL.`,
    );
  }
  const baseField =
    entry.base_url === undefined ? `${param}.document.servers` : `${param}.base_url`;
  await checkUrl(entry.base_url ?? reading.defaultBaseUrl ?? '', baseField, saving);
}

/** Headers and token: none the platform sets, and a token from one place. */
function checkCredentials(entry: StoredSourceEntry, param: string, saving: SourceSaving): void {
  const reserved = Object.keys(entry.headers ?? {}).find((name) =>
    reservedHeaders.has(name.toLowerCase()),
  );
  if (reserved !== undefined) {
    throw new InvalidParameterError(
      `${param}.headers`,
      `'${param}.headers' may not set '${reserved}'${reserved.toLowerCase() === 'authorization' ? ': give the token as bearer_token (stored encrypted) or bearer_token_env' : ''}.`,
    );
  }
  const tokenEnv = entry.bearer_token_env;
  if (tokenEnv === undefined) return;
  const prefix = saving.secretEnvPrefix;
  if (
    !tokenEnv.startsWith(prefix) ||
    tokenEnv.length === prefix.length ||
    tokenEnv === 'TOOL_SECRETS_KEY'
  ) {
    throw new InvalidParameterError(
      `${param}.bearer_token_env`,
      `'${param}.bearer_token_env' must name an environment variable starting with ${prefix} (the only ones tool sources may read).`,
    );
  }
  if (entry.bearer_token !== undefined) {
    throw new InvalidParameterError(
      `${param}.bearer_token`,
      `'${param}.bearer_token' and bearer_token_env cannot both be given; choose one.`,
    );
  }
}

/**
 * The entry to store for `entry` (at `param`, `configuration.tools[i]`), checked: a given token
 * sealed; given back without one (as shown, or edited), the sealed token of the entry of the same
 * type and name in `previousSealed` kept, unless it now reads its token from the environment.
 */
export async function preparedSource(
  accountId: string,
  entry: StoredSourceEntry,
  param: string,
  previousSealed: ReadonlyMap<string, string>,
  saving: SourceSaving,
): Promise<StoredSourceEntry> {
  await checkTarget(entry, param, saving);
  checkCredentials(entry, param, saving);
  // Stored with the defaults their schemas give (the union of entry types fills in none).
  const {
    bearer_token: token,
    bearer_token_set: _set,
    ...kept
  } = {
    ...entry,
    requires_approval: entry.requires_approval ?? false,
    idempotent: entry.idempotent ?? false,
  };
  if (token !== undefined) {
    return {
      ...kept,
      [sealedTokenField]: saving.box.seal(accountId, token, `${param}.bearer_token`),
    };
  }
  const previous = previousSealed.get(`${entry.type}\n${entry.name}`);
  if (previous !== undefined && entry.bearer_token_env === undefined) {
    return { ...kept, [sealedTokenField]: previous };
  }
  return kept;
}
