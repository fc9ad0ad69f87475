// Command-line key management against the configured database: generate, create, list, revoke.
// Creating and revoking are audited as the system's changes (no key made them).
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { generateApiKey } from '../modules/accounts/api-key-format.js';
import { platformOperator, type ApiKeyStatus } from '../modules/accounts/api-key-service.js';
import { scopes, type Scope } from '../auth/scopes.js';
import { ConfigError, loadConfig } from '../config/load-config.js';
import { AppError } from '../errors/app-error.js';
import { createServices, type Services } from '../services.js';
import type { ApiKeyRecord } from '../modules/accounts/api-key.js';
import { keyFields } from '../http/audit-targets.js';
import { systemActor } from '../modules/audit/module.js';

const usage = `Usage: npm run keys -- <command> [options]

Commands:
  generate                      Print a new well-formed key without storing it
                                (for PLATFORM_ADMIN_KEY on first start).
  create --name NAME [--scopes a,b] [--tier TIER] [--allowed-ips CIDR,…] [--expires-at ISO]
                                Create a key; prints the full key once.
  list                          List keys (newest first).
  revoke KEY_ID                 Revoke a key permanently.
  accounts                      List accounts.

Options:
  --account ACCOUNT_ID          Account to act on (default: the platform owner's).
  --json                        Print JSON instead of text.

The database is the service's (DATABASE_URL, PLATFORM_CONFIG); migrations run first.`;

function splitList(value: string | undefined): string[] | undefined {
  return value === undefined
    ? undefined
    : value
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item.length > 0);
}

function describe(record: ApiKeyRecord, status: ApiKeyStatus): string {
  const state =
    status === 'revoked'
      ? `revoked ${record.revokedAt ?? ''}`
      : status === 'expired'
        ? `expired ${record.expiresAt ?? ''}`
        : 'active';
  return `${record.id}  ${record.displayKey}  ${record.name}  [${record.scopes.join(',') || 'no scopes'}]  tier=${record.tier}  ${state}`;
}

async function resolveAccount(services: Services, requested: string | undefined): Promise<string> {
  if (requested !== undefined) return requested;
  const owner = await services.accounts.ownerAccount();
  if (owner === undefined) {
    throw new Error(
      'The database has no accounts yet. Start the service once (npm start) to create the owner account.',
    );
  }
  return owner.id;
}

const options = {
  name: { type: 'string' },
  scopes: { type: 'string' },
  tier: { type: 'string' },
  'allowed-ips': { type: 'string' },
  'expires-at': { type: 'string' },
  account: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof options }>>['values'];

interface CommandContext {
  services: Services;
  values: Values;
  rest: string[];
  print: (text: string, json: unknown) => void;
}

/** The commands that open the database, by name. */
const commands: Record<string, (context: CommandContext) => Promise<void>> = {
  create: createKey,
  list: listKeys,
  revoke: revokeKey,
  accounts: listAccounts,
};

async function run(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, options });
  const [command, ...rest] = positionals;
  if (values.help || command === undefined) {
    process.stdout.write(`${usage}\n`);
    return command === undefined && !values.help ? 2 : 0;
  }
  if (command === 'generate') {
    process.stdout.write(`${generateApiKey()}\n`);
    return 0;
  }
  const handler = Object.hasOwn(commands, command) ? commands[command] : undefined;
  if (handler === undefined) {
    process.stderr.write(`Unknown command '${command}'.\n\n${usage}\n`);
    return 2;
  }

  const config = loadConfig();
  const services = await createServices(config, pino({ level: 'silent' }), { withoutRedis: true });
  const print = (text: string, json: unknown) =>
    process.stdout.write(`${values.json ? JSON.stringify(json, null, 2) : text}\n`);
  try {
    await handler({ services, values, rest, print });
    return 0;
  } finally {
    await services.close();
  }
}

async function createKey({ services, values, print }: CommandContext): Promise<void> {
  if (values.name === undefined) throw new Error('create needs --name NAME');
  const requestedScopes = splitList(values.scopes) ?? [];
  const unknown = requestedScopes.filter((scope) => !(scopes as readonly string[]).includes(scope));
  if (unknown.length > 0) {
    throw new Error(`Unknown scope(s): ${unknown.join(', ')}. Known: ${scopes.join(', ')}`);
  }
  const accountId = await resolveAccount(services, values.account);
  const created = await services.apiKeys.create(
    accountId,
    {
      name: values.name,
      scopes: requestedScopes as Scope[],
      ...(values.tier === undefined ? {} : { tier: values.tier }),
      ...(values['allowed-ips'] === undefined
        ? {}
        : { allowedIps: splitList(values['allowed-ips']) }),
      ...(values['expires-at'] === undefined ? {} : { expiresAt: values['expires-at'] }),
    },
    platformOperator,
  );
  await services.audit.record({
    accountId,
    actor: systemActor,
    action: 'api_key.create',
    target: { type: 'api_key', id: created.record.id },
    changes: { before: null, after: keyFields(created.record) },
    ip: null,
  });
  print(
    `${describe(created.record, services.apiKeys.statusOf(created.record))}\n\nKey (shown once, store it now):\n  ${created.key}`,
    { ...created.record, keyHash: undefined, key: created.key },
  );
}

async function listKeys({ services, values, print }: CommandContext): Promise<void> {
  const accountId = await resolveAccount(services, values.account);
  const page = await services.apiKeys.list(accountId, { limit: 1000, offset: 0 });
  print(
    page.keys.map((record) => describe(record, services.apiKeys.statusOf(record))).join('\n') ||
      '(no keys)',
    page.keys.map((record) => ({
      ...record,
      keyHash: undefined,
      status: services.apiKeys.statusOf(record),
    })),
  );
}

async function revokeKey({ services, values, rest, print }: CommandContext): Promise<void> {
  const keyId = rest[0];
  if (keyId === undefined) throw new Error('revoke needs a KEY_ID');
  const accountId = await resolveAccount(services, values.account);
  const record = await services.apiKeys.revoke(accountId, keyId);
  await services.audit.record({
    accountId,
    actor: systemActor,
    action: 'api_key.revoke',
    target: { type: 'api_key', id: keyId },
    changes: { before: { revoked_at: null }, after: { revoked_at: record.revokedAt } },
    ip: null,
  });
  print(describe(record, 'revoked'), { ...record, keyHash: undefined, status: 'revoked' });
}

async function listAccounts({ services, print }: CommandContext): Promise<void> {
  const page = await services.accounts.list({ limit: 1000, offset: 0 });
  print(
    page.accounts.map((account) => `${account.id}  ${account.kind}  ${account.name}`).join('\n'),
    page.accounts,
  );
}

run(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof ConfigError || error instanceof AppError || error instanceof Error) {
      process.stderr.write(`${error.message}\n`);
    } else process.stderr.write(`${String(error)}\n`);
    process.exit(1);
  },
);
