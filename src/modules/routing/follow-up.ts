// Follow-ups: a short message that leans on the previous turn goes where that turn went, as the
// conversation recorded it or as the previous user message routes now.
import { targetOfKey } from './candidates.js';
import type { Deliberation } from './deliberation.js';
import type { RoutingContext } from './routing-context.js';
import { wordsOf } from './text-features.js';
import { routeKey, type RouteRequest, type RouteTarget, type RoutingCaller } from './types.js';

const followUpOpening =
  /^(and|also|but|or|so|then|now|ok(ay)?|what about|how about|same|again|more|another|shorter|longer|simpler|why|in (english|french|german|spanish|italian|portuguese|dutch|chinese|japanese|korean|russian|arabic|hindi|polish|swedish|turkish)|translate it|do it|make it|as a (table|list|chart))\b/i;
const followUpReference = /\b(it|that|this|those|these|them|the same|one)\b/i;

/** A short message that leans on the previous turn ("and in French?", "make it shorter"). */
export function looksLikeFollowUp(message: string): boolean {
  const words = wordsOf(message, 20);
  if (words.length === 0 || words.length > 8) return false;
  const trimmed = message.trim();
  return followUpOpening.test(trimmed) || (words.length <= 5 && followUpReference.test(trimmed));
}

/** How the previous user message routes now (the decider, called again on it). */
export type Redecide = (
  caller: RoutingCaller,
  request: RouteRequest,
) => Promise<{ target: RouteTarget; decidedBy: string }>;

/** Where the previous turn went, and how that is known; null when nothing says. */
export async function previousTarget(
  context: RoutingContext,
  deliberation: Deliberation,
  redecide: Redecide,
): Promise<{ target: RouteTarget; how: string } | null> {
  const { caller, request, candidates, chatModels } = deliberation;
  if (request.conversationId !== null) {
    const stored = await context.dependencies.repository.lastRouteOf(
      caller.accountId,
      request.conversationId,
    );
    if (stored !== null) {
      const current = targetOfKey(routeKey(stored), candidates, chatModels);
      if (current !== null) return { target: current, how: 'recorded for this conversation' };
    }
  }
  const previousUser = [...request.history]
    .reverse()
    .find((turn) => turn.role === 'user' && turn.content.trim() !== '');
  if (previousUser === undefined) return null;
  const previous = await redecide(caller, {
    ...request,
    message: previousUser.content,
    history: [],
    conversationId: null,
  });
  if (!deliberation.allowed(previous.target)) return null;
  return {
    target: previous.target,
    how: `the previous user message routes there by ${previous.decidedBy.replace('_', '-')}`,
  };
}
