// The audit trail: every administrative change made over HTTP leaves its record. The root's
// `onRoute` hook gives each audited route, whatever module declares it, two hooks of its own (the
// rest pay nothing; a test holds every route that changes state to a rule or a reason). Before
// an audited route's handler runs, its rule reads the target as it is; once the answer is known
// (and before it is sent, so a client that saw the answer finds the record), the rule makes the
// records, and they are appended to their accounts' chains. Which routes are audited, and why
// the others are not, is src/http/audit-rules.ts.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuditActor, AuditLog } from '../modules/audit/module.js';
import type { Principal } from '../modules/accounts/authenticator.js';
import type { Services } from '../service-container.js';
import type { AnsweredContext, AuditRule, AuditRuleServices, RuleContext } from './audit-rule.js';
import { auditRules } from './audit-rules.js';
import type { Fields } from './audit-targets.js';
import type { App } from './types.js';

export interface AuditTrailOptions {
  readonly audit: Pick<AuditLog, 'record'>;
  readonly services: AuditRuleServices;
}

/** The rule of the request's route, if it is audited. */
function ruleOf(request: FastifyRequest): AuditRule | undefined {
  const url = request.routeOptions.url;
  return url === undefined ? undefined : auditRules.get(`${request.method} ${url}`);
}

/** Who made the request: its key, the session it came with, the SSO user whose session it is. */
async function actorOf(principal: Principal, services: AuditRuleServices): Promise<AuditActor> {
  const sessionId = principal.sessionId ?? null;
  const user = sessionId === null ? null : ((await services.userOfKey?.(principal.keyId)) ?? null);
  return {
    kind: user !== null ? 'user' : sessionId !== null ? 'session' : 'key',
    keyId: principal.keyId,
    sessionId,
    user,
  };
}

function parsedAnswer(payload: unknown): () => Record<string, unknown> | null {
  let parsed: Record<string, unknown> | null | undefined;
  return () => {
    if (parsed !== undefined) return parsed;
    parsed = null;
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return parsed;
    try {
      const value: unknown = JSON.parse(payload.toString());
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
        parsed = value as Record<string, unknown>;
      }
    } catch {
      // Not JSON: nothing of it is read.
    }
    return parsed;
  };
}

export function installAuditTrail(app: App, options: AuditTrailOptions): void {
  // What an audited change's rule read before its handler ran, per request.
  const before = new WeakMap<FastifyRequest, Fields | null>();
  const contextOf = (request: FastifyRequest): RuleContext => ({
    request,
    principal: request.principal,
    services: options.services,
  });

  const readBefore = async (request: FastifyRequest) => {
    const rule = ruleOf(request);
    if (rule?.before === undefined || request.principal === null) return;
    before.set(request, await rule.before(contextOf(request)));
  };

  const recordAfter = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const rule = ruleOf(request);
    if (rule === undefined) return payload;
    const context: AnsweredContext = {
      ...contextOf(request),
      status: reply.statusCode,
      answer: parsedAnswer(payload),
      before: before.get(request) ?? null,
    };
    try {
      const records = await rule.records(context);
      const principal = request.principal;
      for (const record of records) {
        const actor =
          record.actor ??
          (principal === null
            ? { kind: 'anonymous' as const, keyId: null, sessionId: null, user: null }
            : await actorOf(principal, options.services));
        const accountId = record.accountId ?? principal?.accountId;
        if (accountId === undefined) continue;
        await options.audit.record({
          accountId,
          actor,
          action: record.action,
          target: record.target,
          changes: record.changes,
          ip: request.ip,
        });
      }
    } catch (error) {
      // The change is made; its record is not. Loud, for the operator: the chain shows no gap
      // (nothing was appended), so this log line is the trace.
      request.log.error(
        { err: error, route: `${request.method} ${request.routeOptions.url ?? ''}` },
        'audit record could not be written',
      );
    }
    return payload;
  };

  // Only the audited routes get the two hooks: every other request (a chat) pays nothing.
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.some((method) => auditRules.has(`${method} ${route.url}`))) return;
    route.preHandler = [...hooksOf(route.preHandler), readBefore];
    route.onSend = [...hooksOf(route.onSend), recordAfter];
  });
}

/** A route's hooks of one kind as a list (Fastify takes one or several). */
function hooksOf<T>(hooks: T | T[] | undefined): T[] {
  if (hooks === undefined) return [];
  return Array.isArray(hooks) ? hooks : [hooks];
}

/** The services the rules read, from the ones the routes use. */
export function auditTrailOf(services: Services): AuditTrailOptions {
  let ownerId: Promise<string | null> | undefined;
  return {
    audit: services.audit,
    services: {
      apiKeys: services.apiKeys,
      budgets: services.modules.budgets.service,
      routing: services.routing,
      agents: services.agents,
      pipelines: services.pipelines,
      knowledge: services.knowledge,
      keyOwner: (presented) => services.authenticator.keyOwner(presented),
      // A session of single sign-on names its person as the actor.
      userOfKey: (keyId) => services.modules.accounts.ssoUserOfKey(keyId),
      ownerAccountId: () =>
        (ownerId ??= services.accounts.ownerAccount().then((owner) => owner?.id ?? null)).then(
          (id) => {
            // An empty database has no owner yet: ask again next time.
            if (id === null) ownerId = undefined;
            return id;
          },
        ),
    },
  };
}
