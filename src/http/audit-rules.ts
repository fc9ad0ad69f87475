// Which requests are administrative changes, and the audit records each leaves: one rule per
// route (`METHOD /path/:param`, as the route was declared). Every route that changes state is
// either here or in `notAudited` with its reason; test/http/audit-log.test.ts checks that against
// the OpenAPI document, so a new route cannot be forgotten.
import { changesOf } from '../modules/audit/audit-changes.js';
import { loginRules } from './audit-login-rules.js';
import {
  accountOf,
  answerId,
  bodyField,
  param,
  succeeded,
  text,
  type AuditRule,
  type RuleContext,
} from './audit-rule.js';
import { loaders, type Fields, type TargetLoader } from './audit-targets.js';

/** Create, change and delete of one kind of target, read by `load`. */
function lifecycle(type: string, idParam: string, load: TargetLoader) {
  const at = (context: RuleContext) => param(context.request, idParam);
  const read = (context: RuleContext, id: string) => load(context.services, accountOf(context), id);
  const create: AuditRule = {
    async records(context) {
      const id = answerId(context);
      if (!succeeded(context) || id === null) return [];
      const after = await read(context, id);
      return [{ action: `${type}.create`, target: { type, id }, changes: changesOf(null, after) }];
    },
  };
  const update = (verb: string): AuditRule => ({
    before: (context) => read(context, at(context)),
    async records(context) {
      if (!succeeded(context)) return [];
      const after = await read(context, at(context));
      const changes = changesOf(context.before, after);
      return [{ action: `${type}.${verb}`, target: { type, id: at(context) }, changes }];
    },
  });
  const remove: AuditRule = {
    before: (context) => read(context, at(context)),
    records: (context) =>
      Promise.resolve(
        succeeded(context)
          ? [
              {
                action: `${type}.delete`,
                target: { type, id: at(context) },
                changes: changesOf(context.before, null),
              },
            ]
          : [],
      ),
  };
  return { create, update: update('update'), revoke: update('revoke'), remove };
}

const keys = lifecycle('api_key', 'key_id', loaders.api_key);
const budgets = lifecycle('budget', 'budget_id', loaders.budget);
const policies = lifecycle('routing_policy', 'policy_id', loaders.routing_policy);
const agents = lifecycle('agent', 'agent_id', loaders.agent);
const pipelines = lifecycle('pipeline', 'pipeline_id', loaders.pipeline);
const knowledgeBases = lifecycle('knowledge_base', 'kb_id', loaders.knowledge_base);

/** POST /v1/accounts: the owner's record of the new account, and the new account's first key. */
const accountCreation: AuditRule = {
  async records(context) {
    const answer = context.answer();
    const id = answerId(context);
    const keyId = answerId(context, 'admin_key_id');
    if (!succeeded(context) || answer === null || id === null || keyId === null) return [];
    const firstKey = await loaders.api_key(context.services, id, keyId);
    return [
      {
        action: 'account.create',
        target: { type: 'account', id },
        changes: changesOf(null, { name: answer.name, tier: answer.tier, admin_key_id: keyId }),
      },
      {
        accountId: id,
        action: 'api_key.create',
        target: { type: 'api_key', id: keyId },
        changes: changesOf(null, firstKey),
      },
    ];
  },
};

/** An approval decision on a tool call of a run. */
function decision(approved: boolean): AuditRule {
  return {
    records: (context) => {
      if (!succeeded(context)) return Promise.resolve([]);
      const after: Fields = {
        decision: approved ? 'approved' : 'rejected',
        step_id: text(bodyField(context.request, 'step_id')),
      };
      // Replacement arguments are the approver's data, not recorded; only that there were some.
      if (approved)
        after.arguments_replaced = bodyField(context.request, 'arguments') !== undefined;
      else after.reason = text(bodyField(context.request, 'reason'));
      const id = param(context.request, 'execution_id');
      return Promise.resolve([
        {
          action: approved ? 'execution.approve' : 'execution.reject',
          target: { type: 'execution', id },
          changes: { before: null, after },
        },
      ]);
    },
  };
}

const documentAdded: AuditRule = {
  records: (context) => {
    const answer = context.answer();
    const id = answerId(context);
    if (!succeeded(context) || answer === null || id === null) return Promise.resolve([]);
    const after = {
      knowledge_base_id: answer.knowledge_base_id,
      title: answer.title,
      content_type: answer.content_type,
      source: answer.source,
    };
    return Promise.resolve([
      {
        action: 'knowledge_document.create',
        target: { type: 'knowledge_document', id },
        changes: changesOf(null, after),
      },
    ]);
  },
};

const documentDeleted: AuditRule = {
  records: (context) =>
    Promise.resolve(
      succeeded(context)
        ? [
            {
              action: 'knowledge_document.delete',
              target: { type: 'knowledge_document', id: param(context.request, 'doc_id') },
              changes: changesOf({ knowledge_base_id: param(context.request, 'kb_id') }, null),
            },
          ]
        : [],
    ),
};

/** Route feedback teaches the account's router where messages (intents) go. */
const routeTaught: AuditRule = {
  records: (context) => {
    const answer = context.answer();
    if (!succeeded(context) || answer === null) return Promise.resolve([]);
    const after = {
      route_to: answer.route_to,
      route_type: answer.route_type,
      route_id: answer.route_id,
    };
    return Promise.resolve([
      {
        action: 'routing_feedback.create',
        target: { type: 'routing_feedback', id: answerId(context, 'feedback_id') },
        changes: changesOf(null, after),
      },
    ]);
  },
};

/** The audited routes. */
export const auditRules: ReadonlyMap<string, AuditRule> = new Map<string, AuditRule>([
  ['POST /v1/accounts', accountCreation],
  ['POST /v1/api-keys', keys.create],
  ['DELETE /v1/api-keys/:key_id', keys.revoke],
  ['POST /v1/budgets', budgets.create],
  ['PATCH /v1/budgets/:budget_id', budgets.update],
  ['DELETE /v1/budgets/:budget_id', budgets.remove],
  ['POST /v1/routing/policies', policies.create],
  ['PATCH /v1/routing/policies/:policy_id', policies.update],
  ['DELETE /v1/routing/policies/:policy_id', policies.remove],
  ['POST /v1/routing/feedback', routeTaught],
  ['POST /v1/agents', agents.create],
  ['PATCH /v1/agents/:agent_id', agents.update],
  ['PUT /v1/agents/:agent_id', agents.update],
  ['DELETE /v1/agents/:agent_id', agents.remove],
  ['POST /v1/pipelines', pipelines.create],
  ['PATCH /v1/pipelines/:pipeline_id', pipelines.update],
  ['PUT /v1/pipelines/:pipeline_id', pipelines.update],
  ['DELETE /v1/pipelines/:pipeline_id', pipelines.remove],
  ['POST /v1/knowledge-bases', knowledgeBases.create],
  ['DELETE /v1/knowledge-bases/:kb_id', knowledgeBases.remove],
  ['POST /v1/knowledge-bases/:kb_id/documents', documentAdded],
  ['DELETE /v1/knowledge-bases/:kb_id/documents/:doc_id', documentDeleted],
  ['POST /v1/executions/:execution_id/approve', decision(true)],
  ['POST /v1/executions/:execution_id/reject', decision(false)],
  ...loginRules,
]);

/**
 * Routes that change state but make no administrative change, each with its reason. A route
 * neither here nor in `auditRules` fails the coverage test.
 */
export const notAudited: Readonly<Record<string, string>> = {
  'POST /v1/chat': 'a conversation turn (usage is in the usage ledger)',
  'POST /chat/completions': 'a model call (usage ledger)',
  'POST /v1/chat/completions': 'a model call (usage ledger)',
  'POST /v1/embeddings': 'a model call (usage ledger)',
  'POST /embeddings': 'a model call (usage ledger)',
  'POST /v1/messages': 'a model call (usage ledger)',
  'POST /v1/messages/count_tokens': 'reads nothing and changes nothing',
  'POST /v1/responses': 'a model call (usage ledger)',
  'DELETE /v1/responses/:response_id': "an end user's stored answer, not administration",
  'POST /v1/conversations': "an end user's conversation",
  'PATCH /v1/conversations/:conversation_id': "an end user's conversation",
  'DELETE /v1/conversations/:conversation_id': "an end user's conversation",
  'POST /v1/conversations/:conversation_id/template': "an end user's conversation",
  'POST /v1/feedback': "an end user's rating of an answer",
  'POST /v1/routing/intent': 'classifies a message; changes no setting',
  'POST /v1/routing/route': 'recommends a route; changes no setting',
  'POST /v1/knowledge-bases/:kb_id/search': 'a search',
  'POST /v1/layout': 'computes a layout; changes nothing',
  'POST /v1/agents/:agent_id/execute': 'a run (its execution record and usage are kept)',
  'POST /v1/pipelines/:pipeline_id/execute': 'a run (its execution record and usage are kept)',
  'POST /v1/speech/transcribe': 'a model call (usage ledger)',
  'POST /v1/speech/synthesize': 'a model call (usage ledger)',
  'POST /v1/audio/transcriptions': 'a model call (usage ledger)',
  'POST /v1/audio/speech': 'a model call (usage ledger)',
  'POST /v1/voice/sessions': 'opens a voice conversation',
  'POST /mcp': 'tool calls of the MCP server (runs, not administration)',
  'DELETE /mcp': 'ends an MCP transport session',
};
