// Teaching the router: route feedback stores an example (with its embedding when the router
// blends one in), which every instance's router learns online on its next use.
import { createHash } from 'node:crypto';
import { ConflictError } from '../../errors/app-error.js';
import { newId } from '../../ids.js';
import { resolveTarget } from './candidates.js';
import type { RoutingContext } from './routing-context.js';
import { normalizeText } from './text-features.js';
import { routeKey, type RouteTarget, type RouteType, type RoutingCaller } from './types.js';

export interface TeachingInput {
  readonly message: string;
  readonly selectedRoute: string;
  readonly routeType: RouteType | null;
  readonly conversationId: string | null;
  readonly signal: AbortSignal;
}

export interface Taught {
  readonly feedbackId: string;
  readonly target: RouteTarget;
  /** Examples the router now holds for the target. */
  readonly examples: number;
  readonly notice: string | null;
}

/** The stable key of a taught message: its normalised text's digest. */
export function messageKey(message: string): string {
  const normalised = normalizeText(message).replace(/\s+/g, ' ').trim();
  return createHash('sha256').update(normalised).digest('hex').slice(0, 40);
}

/** The example's embedding, or a notice saying why it is stored for the lexical model alone. */
async function exampleEmbedding(
  context: RoutingContext,
  model: string | null,
  input: TeachingInput,
  accountId: string,
): Promise<{ embedding: Float32Array | null; notice: string | null }> {
  if (model === null) return { embedding: null, notice: null };
  try {
    return {
      embedding: await context.embed(model, input.message, input.signal, accountId),
      notice: null,
    };
  } catch (error) {
    return {
      embedding: null,
      notice: `The embedding model '${model}' failed (${error instanceof Error ? error.message : 'error'}); the example was stored for the lexical model only.`,
    };
  }
}

export async function teach(
  context: RoutingContext,
  caller: RoutingCaller,
  input: TeachingInput,
): Promise<Taught> {
  const { router, candidates } = await context.account(caller.accountId);
  const target = resolveTarget(
    input.selectedRoute,
    input.routeType,
    candidates,
    context.chatModels(),
    'selected_route',
  );
  const { embedding, notice } = await exampleEmbedding(
    context,
    router.embeddingModel,
    input,
    caller.accountId,
  );
  const id = newId('rfb');
  const result = await context.dependencies.repository.addExample(
    caller.accountId,
    {
      id,
      message: input.message,
      messageKey: messageKey(input.message),
      route: target,
      conversationId: input.conversationId,
      embedding,
      embeddingModel: embedding === null ? null : router.embeddingModel,
      createdAt: new Date(context.now()).toISOString(),
    },
    context.config.routing.maxExamplesPerAccount,
  );
  if ('full' in result) {
    throw new ConflictError(
      `The router of this account holds ${result.full} taught examples, its limit (routing.max_examples_per_account). A message taught again replaces its earlier example.`,
    );
  }
  const examples = (router.index.routes().get(routeKey(target)) ?? 0) + 1;
  return { feedbackId: id, target, examples, notice };
}
