// The shape of an audit rule — what it reads before a request is handled and the records it
// makes of the answer — and the helpers the rules share (src/http/audit-rules.ts holds the table).
import type { FastifyRequest } from 'fastify';
import type { Principal } from '../modules/accounts/authenticator.js';
import type { AuditActor, AuditChanges } from '../modules/audit/module.js';
import type { AuditTargetServices, Fields } from './audit-targets.js';

/** What the rules read besides the targets: who a presented key is, whose a session is. */
export interface AuditRuleServices extends AuditTargetServices {
  /** The key and account a presented key names, whatever its state (failed logins). */
  readonly keyOwner: (
    presented: string,
  ) => Promise<{ keyId: string; accountId: string } | undefined>;
  /** The platform owner's account: failed logins with an unknown key are recorded there. */
  readonly ownerAccountId: () => Promise<string | null>;
  /** The single-sign-on user whose (hidden) key this is, if any (set by the SSO wiring). */
  readonly userOfKey?: (keyId: string) => Promise<string | null>;
}

export interface RuleContext {
  readonly request: FastifyRequest;
  readonly principal: Principal | null;
  readonly services: AuditRuleServices;
}

export interface AnsweredContext extends RuleContext {
  readonly status: number;
  /** The answer's JSON (parsed on first use; null when it is not JSON). */
  readonly answer: () => Record<string, unknown> | null;
  /** What the rule's `before` read. */
  readonly before: Fields | null;
}

/** A record as a rule describes it; account, actor and address default to the request's. */
export interface RuleRecord {
  readonly accountId?: string;
  readonly actor?: AuditActor;
  readonly action: string;
  readonly target: { readonly type: string; readonly id: string | null };
  readonly changes: AuditChanges | null;
}

export interface AuditRule {
  /** Read before the handler runs: the target's fields as they were (changes and deletions). */
  readonly before?: (context: RuleContext) => Promise<Fields | null>;
  /** The records of an answered request (none when nothing changed). */
  readonly records: (context: AnsweredContext) => Promise<RuleRecord[]>;
}

export const succeeded = (context: AnsweredContext) =>
  context.status >= 200 && context.status < 300;

export function param(request: FastifyRequest, name: string): string {
  const value = (request.params as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
}

/** An own member of a parsed JSON value (never one of its prototype's); undefined if none. */
export function member(value: unknown, name: string): unknown {
  return value !== null && typeof value === 'object' && Object.hasOwn(value, name)
    ? (value as Record<string, unknown>)[name]
    : undefined;
}

export function bodyField(request: FastifyRequest, name: string): unknown {
  return member(request.body, name);
}

export function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

export function answerId(context: AnsweredContext, field = 'id'): string | null {
  return text(context.answer()?.[field]);
}

export const accountOf = (context: RuleContext) => context.principal?.accountId ?? '';
