// A message's intent as routing stores it: its classification, entities and complexity; and the
// classification a caller asks for, by the shipped classifier or a named chat model.
import { AppError } from '../../errors/app-error.js';
import { newId } from '../../ids.js';
import { assessComplexity } from './complexity.js';
import { detectEntities, type Entity } from '../../text/entities.js';
import type { Classification } from './intent-classifier.js';
import type { RoutingContext } from './routing-context.js';
import type { Intent, RouteTarget, RoutingCaller } from './types.js';

export interface IntentFields {
  readonly accountId: string;
  readonly message: string;
  readonly conversationId: string | null;
  readonly classification: Classification;
  readonly route: RouteTarget | null;
}

/** The intent record of a message whose entities are known (found at `now`). */
export function buildIntent(fields: IntentFields, entities: Entity[], now: Date): Intent {
  const { classification } = fields;
  const complexity = assessComplexity(fields.message, entities.length);
  return {
    id: newId('int'),
    accountId: fields.accountId,
    conversationId: fields.conversationId,
    text: fields.message,
    category: classification.category,
    confidence: classification.confidence,
    metadata: {
      detected_entities: entities.map((entity) => entity.text),
      entities,
      complexity: complexity.level,
      complexity_score: complexity.score,
      complexity_signals: complexity.signals,
      method: classification.method,
      alternatives: classification.alternatives,
    },
    route: fields.route,
    createdAt: now.toISOString(),
  };
}

/** The intent a routing decision records: entities found here, without the name tagger. */
export function draftIntent(context: RoutingContext, fields: IntentFields): Intent {
  const now = new Date(context.now());
  return buildIntent(fields, detectEntities(fields.message, now, { names: false }), now);
}

/** The requested chat model's classification, or the shipped classifier's. */
async function classification(
  context: RoutingContext,
  caller: RoutingCaller,
  input: { message: string; model: string | null; signal: AbortSignal },
): Promise<{ classification: Classification; notice: string | undefined }> {
  const { classifier, models } = context.dependencies;
  const requested = input.model ?? context.config.routing.intentModel;
  if (requested === null) {
    return { classification: classifier.classify(input.message), notice: undefined };
  }
  const name = models.resolveChatModelName(requested);
  try {
    const answer = await classifier.classifyWithModel(
      input.message,
      name,
      caller.accountId,
      input.signal,
    );
    return { classification: answer, notice: undefined };
  } catch (error) {
    // A model the request named must answer; the configured default may fall back.
    if (input.model !== null || !(error instanceof AppError)) throw error;
    return {
      classification: classifier.classify(input.message),
      notice: `The configured intent model '${name}' could not classify (${error.message}); the shipped classifier did.`,
    };
  }
}

/** Classifies and stores an intent (entities, complexity); a named chat model refines it. */
export async function classifyIntent(
  context: RoutingContext,
  caller: RoutingCaller,
  input: {
    message: string;
    conversationId: string | null;
    model: string | null;
    signal: AbortSignal;
  },
): Promise<Intent> {
  const classified = await classification(context, caller, input);
  const notice = classified.notice ?? classified.classification.notice;
  const now = new Date(context.now());
  const entities = await (context.dependencies.namedEntities?.(input.message, now, input.signal) ??
    detectEntities(input.message, now, { names: true }));
  const intent = buildIntent(
    {
      accountId: caller.accountId,
      message: input.message,
      conversationId: input.conversationId,
      classification: classified.classification,
      route: null,
    },
    entities,
    now,
  );
  const stored: Intent =
    notice === undefined ? intent : { ...intent, metadata: { ...intent.metadata, notice } };
  await context.dependencies.repository.insertIntent(stored);
  return stored;
}
