// Routing over HTTP: intent classification, route recommendation, route feedback that teaches the
// router, and the account's routing policies (spec operations 32–34 and the policy endpoints), as
// one Fastify plugin over the routing service.
import type { FastifyRequest } from 'fastify';
import Type from 'typebox';
import type { Principal } from '../accounts/authenticator.js';
import { access } from '../../auth/scopes.js';
import { clientGoneSignal } from '../../http/streaming.js';
import { principalOf, type App } from '../../http/types.js';
import type { RoutingPolicy } from './policies.js';
import type { RouteDecision } from './decider.js';
import type { RoutingService } from './routing-service.js';
import {
  ClassifyIntentBody,
  DeletedPolicySchema,
  FeedbackBody,
  FeedbackResponseSchema,
  IntentIdParams,
  IntentSchema,
  PolicyBody,
  PolicyIdParams,
  PolicySchema,
  RouteBody,
  RouteResponseSchema,
} from './routing.schemas.js';
import type { Intent, RoutingCaller } from './types.js';
import { featurePlugin, type FeaturePlugin } from '../../http/feature-plugin.js';

export type RoutingPlugin = FeaturePlugin;

/** The routes of routing, registered by app.ts like any Fastify plugin. */
export function routingPlugin(routing: RoutingService): RoutingPlugin {
  return featurePlugin('routing', (app) => {
    app.addSchema(IntentSchema);
    app.addSchema(PolicySchema);
    intentRoutes(app, routing);
    routeRoutes(app, routing);
    feedbackRoutes(app, routing);
    policyCollectionRoutes(app, routing);
    policyRoutes(app, routing);
  });
}

function intentJson(intent: Intent) {
  return {
    id: intent.id,
    text: intent.text,
    category: intent.category,
    confidence: intent.confidence,
    timestamp: intent.createdAt,
    conversation_id: intent.conversationId,
    metadata: intent.metadata as unknown as Record<string, never>,
    route:
      intent.route === null
        ? null
        : {
            route_to: intent.route.name,
            route_type: intent.route.type,
            route_id: intent.route.ref,
          },
  };
}

function decisionJson(decision: RouteDecision) {
  return {
    success: true,
    route_to: decision.target.name,
    route_type: decision.target.type,
    route_id: decision.target.ref,
    confidence: decision.confidence,
    intent: {
      id: decision.intent.id,
      category: decision.intent.category,
      confidence: decision.intent.confidence,
    },
    rationale: decision.rationale,
    alternative_routes: decision.alternatives.map((alternative) => ({
      route_to: alternative.target.name,
      route_type: alternative.target.type,
      route_id: alternative.target.ref,
      confidence: alternative.confidence,
    })),
    decided_by: decision.decidedBy,
    policy:
      decision.policy === null ? null : { id: decision.policy.id, name: decision.policy.name },
    max_tokens: decision.maxTokens,
    strategy: decision.strategy,
    method: decision.method,
    notices: decision.notices,
  };
}

async function policyJson(routing: RoutingService, accountId: string, policy: RoutingPolicy) {
  const name = await routing.routeTargetName(accountId, policy);
  const routeTo = policy.actions.route_to;
  return {
    id: policy.id,
    name: policy.name,
    description: policy.description,
    priority: policy.priority,
    enabled: policy.enabled,
    conditions: policy.conditions as Record<string, unknown>,
    actions: {
      ...policy.actions,
      ...(routeTo === undefined ? {} : { route_to: { ...routeTo, name } }),
    } as Record<string, unknown>,
    created_at: policy.createdAt,
    updated_at: policy.updatedAt,
  };
}

function callerOf(principal: Principal): RoutingCaller {
  return { accountId: principal.accountId, tier: principal.tier, scopes: principal.scopes };
}

/** The caller, once the conversation the body names (if any) is known to be theirs (else 404). */
async function checkedCaller(
  routing: RoutingService,
  request: FastifyRequest,
  body: { conversation_id?: string; user_id?: string },
): Promise<RoutingCaller> {
  const principal = principalOf(request);
  await routing.checkConversation(
    principal.accountId,
    body.conversation_id ?? null,
    body.user_id ?? null,
  );
  return callerOf(principal);
}

function intentRoutes(app: App, routing: RoutingService): void {
  app.post(
    '/v1/routing/intent',
    {
      config: { access: access.scopes('chat:write'), feature: 'autonomous_routing' },
      schema: {
        operationId: 'classifyIntent',
        tags: ['Routing'],
        summary: 'Classify intent',
        description:
          'Classifies the message into the taxonomy (see docs/routing-and-layout.md) with the shipped classifier, or with the chat model named in `model` (or `routing.intent_model`), detects entities (dates, numbers, money, e-mail addresses, URLs, people, places, organisations, other names) and rates its complexity by documented signals. The intent is stored with its id.',
        body: ClassifyIntentBody,
        response: {
          200: Type.Object({ success: Type.Boolean(), intent: Type.Ref('RoutingIntent') }),
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const caller = await checkedCaller(routing, request, body);
      const intent = await routing.classifyIntent(caller, {
        message: body.message,
        conversationId: body.conversation_id ?? null,
        model: body.model ?? null,
        signal: clientGoneSignal(reply),
      });
      return { success: true, intent: intentJson(intent) };
    },
  );

  app.get(
    '/v1/routing/intents/:intent_id',
    {
      config: { access: access.scopes('chat:read'), feature: 'autonomous_routing' },
      schema: {
        operationId: 'getIntent',
        tags: ['Routing'],
        summary: 'Get a stored intent',
        description:
          'An intent made by POST /v1/routing/intent or /v1/routing/route (with where the route sent it).',
        params: IntentIdParams,
        response: { 200: Type.Object({ intent: Type.Ref('RoutingIntent') }) },
      },
    },
    async (request) => {
      const { accountId } = principalOf(request);
      return { intent: intentJson(await routing.getIntent(accountId, request.params.intent_id)) };
    },
  );
}

function routeRoutes(app: App, routing: RoutingService): void {
  app.post(
    '/v1/routing/route',
    {
      config: { access: access.scopes('chat:write'), feature: 'autonomous_routing' },
      schema: {
        operationId: 'routeMessage',
        tags: ['Routing'],
        summary: 'Route a message',
        description:
          'Recommends where the message should go among the account’s agents, pipelines and the catalog’s chat models, in this order: a routing policy that routes; a follow-up goes where the conversation’s previous turn went; the examples the account taught through POST /v1/routing/feedback; the intent and the agent types’ capabilities; a chat model by `preferred_models` or `routing_strategy` (balanced, quality, cost, latency). `rationale` names the signal that decided; when nothing taught resembles the message the answer says so, with low confidence.',
        body: RouteBody,
        response: { 200: RouteResponseSchema },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const caller = await checkedCaller(routing, request, body);
      const decision = await routing.route(caller, {
        message: body.message,
        conversationId: body.conversation_id ?? null,
        history: body.context?.history ?? [],
        preferredModels: body.context?.preferences?.preferred_models ?? [],
        strategy: body.context?.preferences?.routing_strategy ?? null,
        signal: clientGoneSignal(reply),
      });
      return decisionJson(decision);
    },
  );
}

function feedbackRoutes(app: App, routing: RoutingService): void {
  app.post(
    '/v1/routing/feedback',
    {
      config: { access: access.scopes('chat:write'), feature: 'autonomous_routing' },
      schema: {
        operationId: 'routeFeedback',
        tags: ['Routing'],
        summary: 'Teach the router',
        description:
          'Says where a message should have gone. `selected_route` names an agent or pipeline of the account (id or name) or a chat model of the catalog; an unknown or ambiguous one is a 400 (`route_type` disambiguates). The example is stored and the account’s router learns it online: the next route call, on any instance, already uses it. Teaching the same message again replaces its earlier example.',
        body: FeedbackBody,
        response: { 200: FeedbackResponseSchema },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const caller = await checkedCaller(routing, request, body);
      const taught = await routing.feedback(caller, {
        message: body.message,
        selectedRoute: body.selected_route,
        routeType: body.route_type ?? null,
        conversationId: body.conversation_id ?? null,
        signal: clientGoneSignal(reply),
      });
      return {
        success: true,
        message: `Learned: messages like this go to ${taught.target.type} '${taught.target.name}' (${taught.examples} taught example${taught.examples === 1 ? '' : 's'} for it).`,
        feedback_id: taught.feedbackId,
        route_to: taught.target.name,
        route_type: taught.target.type,
        route_id: taught.target.ref,
        notice: taught.notice,
      };
    },
  );
}

/** The account's policies: creating one (`agents:write`) and listing them (`agents:read`). */
function policyCollectionRoutes(app: App, routing: RoutingService): void {
  app.post(
    '/v1/routing/policies',
    {
      config: { access: access.scopes('agents:write'), feature: 'policy_engine' },
      schema: {
        operationId: 'createRoutingPolicy',
        tags: ['Routing'],
        summary: 'Create a routing policy',
        description:
          'A declarative rule evaluated, with the account’s other policies in priority order, before the learned router (and for chat requests). Invalid rules are a 400 naming the field.',
        body: PolicyBody(true),
        response: { 201: Type.Ref('RoutingPolicy') },
      },
    },
    async (request, reply) => {
      const { accountId } = principalOf(request);
      const { name, description, priority, enabled, conditions, actions } = request.body;
      const policy = await routing.createPolicy(accountId, {
        name,
        description,
        priority,
        enabled,
        conditions,
        actions,
      });
      return reply.code(201).send(await policyJson(routing, accountId, policy));
    },
  );

  app.get(
    '/v1/routing/policies',
    {
      config: { access: access.scopes('agents:read'), feature: 'policy_engine' },
      schema: {
        operationId: 'listRoutingPolicies',
        tags: ['Routing'],
        summary: 'List routing policies',
        description: 'The account’s policies in evaluation order (priority, then creation).',
        response: { 200: Type.Object({ policies: Type.Array(Type.Ref('RoutingPolicy')) }) },
      },
    },
    async (request) => {
      const { accountId } = principalOf(request);
      const policies = await routing.listPolicies(accountId);
      return {
        policies: await Promise.all(
          policies.map((policy) => policyJson(routing, accountId, policy)),
        ),
      };
    },
  );
}

/** One policy: reading it (`agents:read`), changing and deleting it (`agents:write`). */
function policyRoutes(app: App, routing: RoutingService): void {
  app.get(
    '/v1/routing/policies/:policy_id',
    {
      config: { access: access.scopes('agents:read'), feature: 'policy_engine' },
      schema: {
        operationId: 'getRoutingPolicy',
        tags: ['Routing'],
        summary: 'Get a routing policy',
        params: PolicyIdParams,
        response: { 200: Type.Ref('RoutingPolicy') },
      },
    },
    async (request) => {
      const { accountId } = principalOf(request);
      const policy = await routing.getPolicy(accountId, request.params.policy_id);
      return policyJson(routing, accountId, policy);
    },
  );

  app.patch(
    '/v1/routing/policies/:policy_id',
    {
      config: { access: access.scopes('agents:write'), feature: 'policy_engine' },
      schema: {
        operationId: 'updateRoutingPolicy',
        tags: ['Routing'],
        summary: 'Change a routing policy',
        description: 'The given fields change; `conditions` and `actions` are replaced whole.',
        params: PolicyIdParams,
        body: PolicyBody(false),
        response: { 200: Type.Ref('RoutingPolicy') },
      },
    },
    async (request) => {
      const { accountId } = principalOf(request);
      const { name, description, priority, enabled, conditions, actions } = request.body;
      const policy = await routing.updatePolicy(accountId, request.params.policy_id, {
        name,
        description,
        priority,
        enabled,
        conditions,
        actions,
      });
      return policyJson(routing, accountId, policy);
    },
  );

  app.delete(
    '/v1/routing/policies/:policy_id',
    {
      config: { access: access.scopes('agents:write'), feature: 'policy_engine' },
      schema: {
        operationId: 'deleteRoutingPolicy',
        tags: ['Routing'],
        summary: 'Delete a routing policy',
        params: PolicyIdParams,
        response: { 200: DeletedPolicySchema },
      },
    },
    async (request) => {
      const { accountId } = principalOf(request);
      await routing.deletePolicy(accountId, request.params.policy_id);
      return {
        success: true,
        message: `Routing policy '${request.params.policy_id}' was deleted.`,
        id: request.params.policy_id,
      };
    },
  );
}
