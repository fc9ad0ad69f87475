// The one ordered list of migrations, shared by both dialects (column types come from the dialect).
import type { Migration, MigrationProvider } from 'kysely';
import type { ColumnTypes } from '../dialects/dialect.js';
import { accountsAndApiKeys } from './001-accounts-and-api-keys.js';
import { conversations } from './002-conversations.js';
import { knowledge } from './003-knowledge.js';
import { agents } from './004-agents.js';
import { pipelines } from './005-pipelines.js';
import { executions } from './006-executions.js';
import { routing } from './007-routing.js';
import { voice } from './008-voice.js';
import { sessions } from './009-sessions.js';
import { executionPlans } from './010-execution-plans.js';
import { accountTiers } from './011-account-tiers.js';
import { conversationsByAccount } from './012-conversations-by-account.js';
import { messageParts } from './013-message-parts.js';
import { responses } from './014-responses.js';
import { toolsExposure } from './015-tools-exposure.js';
import { executionSteps } from './016-execution-steps.js';
import { stepToolSchema } from './017-step-tool-schema.js';
import { pendingDocuments } from './018-pending-documents.js';
import { usageRecords } from './019-usage-records.js';
import { budgets } from './020-budgets.js';
import { usageRecordsByExecution } from './021-usage-records-by-execution.js';
import { auditLog } from './022-audit-log.js';
import { ssoUsers } from './023-sso-users.js';

export function migrationProvider(types: ColumnTypes): MigrationProvider {
  const migrations: Record<string, Migration> = {
    '001-accounts-and-api-keys': accountsAndApiKeys(types),
    '002-conversations': conversations(types),
    '003-knowledge': knowledge(types),
    '004-agents': agents(types),
    '005-pipelines': pipelines(types),
    '006-executions': executions(types),
    '007-routing': routing(types),
    '008-voice': voice(types),
    '009-sessions': sessions(types),
    '010-execution-plans': executionPlans(types),
    '011-account-tiers': accountTiers(types),
    '012-conversations-by-account': conversationsByAccount(types),
    '013-message-parts': messageParts(types),
    '014-responses': responses(types),
    '015-tools-exposure': toolsExposure(types),
    '016-execution-steps': executionSteps(types),
    '017-step-tool-schema': stepToolSchema(),
    '018-pending-documents': pendingDocuments(types),
    '019-usage-records': usageRecords(types),
    '020-budgets': budgets(types),
    '021-usage-records-by-execution': usageRecordsByExecution(),
    '022-audit-log': auditLog(),
    '023-sso-users': ssoUsers(types),
  };
  return { getMigrations: () => Promise.resolve(migrations) };
}
