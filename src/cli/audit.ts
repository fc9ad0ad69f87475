// Command-line audit log tools against the configured database: verify the chains, prune by the
// configured retention. `verify` exits 0 with a summary when every chain is intact, 1 naming the
// first broken record (its id, account, and why), 2 on a usage error.
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { ConfigError, loadConfig } from '../config/load-config.js';
import { createAuditModule, type AuditModule } from '../modules/audit/module.js';
import { openStorage } from '../storage/database.js';

const usage = `Usage: npm run audit -- <command> [options]

Commands:
  verify [--account ACCOUNT_ID]   Walk each account's chain (or that account's) and check every
                                  record's hash, seq and link; exits 1 naming the first broken one.
  prune                           Delete the records older than the configured retention
                                  (AUDIT_RETENTION_DAYS / audit.retention_days) now.

Options:
  --json                          Print JSON instead of text.

The database is the service's (DATABASE_URL, PLATFORM_CONFIG); migrations run first.`;

const options = {
  account: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

type Print = (text: string, json: unknown) => void;

async function verify(audit: AuditModule, account: string | undefined, print: Print) {
  const report = await audit.verify(account === undefined ? undefined : [account]);
  if (!report.ok) {
    const { broken } = report;
    print(
      `BROKEN: account ${broken.accountId}, record ${broken.recordId ?? '(none: the end of the chain)'}${broken.seq === null ? '' : ` (seq ${broken.seq})`}: ${broken.reason}\n${broken.message}`,
      { ok: false, broken, verified: report.chains },
    );
    return 1;
  }
  const lines = report.chains.map(
    (chain) =>
      `${chain.accountId}  ${chain.records} record${chain.records === 1 ? '' : 's'}${chain.firstSeq === null ? '' : ` (seq ${chain.firstSeq}–${chain.lastSeq})`}  head ${chain.lastHash}`,
  );
  const records = report.chains.reduce((sum, chain) => sum + chain.records, 0);
  print(
    `OK: ${report.chains.length} chain${report.chains.length === 1 ? '' : 's'}, ${records} record${records === 1 ? '' : 's'} intact.${lines.length > 0 ? `\n${lines.join('\n')}` : ''}`,
    { ok: true, chains: report.chains },
  );
  return 0;
}

async function run(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, options });
  const [command] = positionals;
  if (values.help || command === undefined) {
    process.stdout.write(`${usage}\n`);
    return command === undefined && !values.help ? 2 : 0;
  }
  if (command !== 'verify' && command !== 'prune') {
    process.stderr.write(`Unknown command '${command}'.\n\n${usage}\n`);
    return 2;
  }
  const config = loadConfig();
  const storage = await openStorage(config.database);
  const logger = pino({ level: 'silent' });
  const audit = createAuditModule({ storage, config: config.audit, logger, now: Date.now });
  const print: Print = (text, json) =>
    process.stdout.write(`${values.json ? JSON.stringify(json, null, 2) : text}\n`);
  try {
    if (command === 'verify') return await verify(audit, values.account, print);
    const days = config.audit.retentionDays;
    if (days === null) {
      print('No retention is configured (AUDIT_RETENTION_DAYS): every record is kept.', {
        deleted: 0,
      });
      return 0;
    }
    const deleted = await audit.log.prune(days);
    print(`Deleted ${deleted} record${deleted === 1 ? '' : 's'} older than ${days} days.`, {
      deleted,
    });
    return 0;
  } finally {
    await audit.close();
    await storage.close();
  }
}

run(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
    } else {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    }
    process.exitCode = 2;
  },
);
