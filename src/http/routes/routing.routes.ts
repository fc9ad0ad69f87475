// Routing: intent classification, route recommendation, route feedback that teaches the router,
// and the account's routing policies (spec operations 32–34 and the policy endpoints).
import type { FastifyRequest } from 'fastify';
import Type from 'typebox';
import type { Principal } from '../../auth/authenticator.js';
import { access, scopes } from '../../auth/scopes.js';
import { routingStrategies } from '../../routing/model-selection.js';
import type { RoutingPolicy } from '../../routing/policies.js';
import type { RouteDecision, RoutingCaller } from '../../routing/routing-service.js';
import { intentCategories } from '../../routing/taxonomy.js';
import { routeTypes, type Intent } from '../../routing/types.js';
import type { Services } from '../../services.js';
import { ModelNameSchema, ObjectIdSchema, Timestamp, commonParameters } from '../schemas/common.js';
import { clientGoneSignal } from '../streaming.js';
import { principalOf, type App } from '../types.js';

/** A string that is one of `values` (an `enum` in the document, a literal union in TypeScript). */
function oneOf<T extends string>(values: readonly T[], description?: string) {
  return Type.Unsafe<T>({
    type: 'string',
    enum: [...values],
    ...(description === undefined ? {} : { description }),
  });
}

/** Longest message routed or classified (a pasted document is routed by its beginning anyway). */
export const maxRoutedMessageLength = 20_000;

const MessageSchema = (description: string) =>
  Type.String({ minLength: 1, maxLength: maxRoutedMessageLength, description });

const RouteTypeSchema = oneOf(routeTypes, 'agent, pipeline or model.');

const CategorySchema = oneOf(
  intentCategories,
  'A taxonomy category (see docs/routing-and-layout.md, "Taxonomy").',
);

const EntitySchema = Type.Object({
  type: Type.String({
    description: 'email, url, money, date, person, place, organization, name or number.',
  }),
  text: Type.String(),
  value: Type.Union([Type.String(), Type.Number()], {
    description: 'ISO 8601 for dates, a number for numbers, `<amount> <currency>` for money.',
  }),
  start: Type.Integer(),
  end: Type.Integer(),
});

const IntentSchema = Type.Object(
  {
    id: Type.String({ description: 'int_…' }),
    text: Type.String({ description: 'The analysed message.' }),
    category: CategorySchema,
    confidence: Type.Number({ minimum: 0, maximum: 1 }),
    timestamp: Timestamp(),
    conversation_id: Type.Union([Type.String(), Type.Null()]),
    metadata: Type.Object({
      detected_entities: Type.Array(Type.String(), {
        description: 'The entities’ texts in reading order (details in `entities`).',
      }),
      complexity: Type.Union([
        Type.Literal('simple'),
        Type.Literal('moderate'),
        Type.Literal('complex'),
      ]),
      entities: Type.Array(EntitySchema),
      complexity_score: Type.Integer({ description: 'The points the signals add up to.' }),
      complexity_signals: Type.Record(Type.String(), Type.Union([Type.Number(), Type.Boolean()])),
      method: Type.String({ description: '`classifier` or `model:<name>`.' }),
      alternatives: Type.Array(
        Type.Object({ category: CategorySchema, confidence: Type.Number() }),
      ),
      notice: Type.Optional(Type.String()),
    }),
    route: Type.Union(
      [
        Type.Object({
          route_to: Type.String(),
          route_type: RouteTypeSchema,
          route_id: Type.String(),
        }),
        Type.Null(),
      ],
      { description: 'Where a route call sent the message; null for a classification.' },
    ),
  },
  { $id: 'RoutingIntent', title: 'RoutingIntent' },
);

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

const AlternativeSchema = Type.Object({
  route_to: Type.String(),
  route_type: RouteTypeSchema,
  route_id: Type.String({ description: 'Agent or pipeline id, or model name (an addition).' }),
  confidence: Type.Number(),
});

const RouteResponseSchema = Type.Object({
  success: Type.Boolean(),
  route_to: Type.String({ description: 'The target’s name.' }),
  route_type: RouteTypeSchema,
  route_id: Type.String({ description: 'Agent or pipeline id, or model name (an addition).' }),
  confidence: Type.Number({ minimum: 0, maximum: 1 }),
  intent: Type.Object({ id: Type.String(), category: CategorySchema, confidence: Type.Number() }),
  rationale: Type.String({
    description: 'Which signal decided, in a sentence a person can check.',
  }),
  alternative_routes: Type.Array(AlternativeSchema, { description: 'Ranked, best first.' }),
  decided_by: Type.Union(
    [
      Type.Literal('policy'),
      Type.Literal('follow_up'),
      Type.Literal('learned'),
      Type.Literal('capability'),
      Type.Literal('model'),
    ],
    {
      description:
        'Which stage decided (see docs/routing-and-layout.md, "How a route is decided").',
    },
  ),
  policy: Type.Union([Type.Object({ id: Type.String(), name: Type.String() }), Type.Null()]),
  max_tokens: Type.Union([Type.Integer(), Type.Null()], {
    description: 'A policy’s cap on max_tokens for this message, when one applies.',
  }),
  strategy: Type.String(),
  method: Type.String({
    description: '`lexical`, or `lexical+embedding:<model>` when an embedding model took part.',
  }),
  notices: Type.Array(Type.String()),
});

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

const ScopeSchema = oneOf(scopes);

const ConditionsSchema = Type.Object(
  {
    intent_categories: Type.Optional(
      Type.Array(CategorySchema, { minItems: 1, maxItems: intentCategories.length }),
    ),
    keywords: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
        minItems: 1,
        maxItems: 50,
        description: 'Any of these words or phrases (case-insensitive, whole words).',
      }),
    ),
    pattern: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 500,
        description:
          'A regular expression in RE2 syntax (no back-references or look-arounds), case-insensitive, matched against the first 2000 characters.',
      }),
    ),
    tiers: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 32 }), { minItems: 1, maxItems: 20 }),
    ),
    scopes: Type.Optional(
      Type.Array(ScopeSchema, {
        minItems: 1,
        maxItems: scopes.length,
        description: 'The key holds any of these scopes (admin holds all).',
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'Every condition given must hold; none given: the policy applies to every message.',
  },
);

const ProviderSchema = Type.String({
  minLength: 1,
  maxLength: 100,
  description:
    'A model’s provider (its maker, e.g. OpenAI) or connection (openai, anthropic, google, openai-compatible, local), without case.',
});

const ActionsSchema = Type.Object(
  {
    route_to: Type.Optional(
      Type.Object(
        {
          type: Type.Optional(RouteTypeSchema),
          target: Type.String({
            minLength: 1,
            maxLength: 200,
            description: 'An agent or pipeline id or name of the account, or a chat model name.',
          }),
        },
        { additionalProperties: false },
      ),
    ),
    forbid_models: Type.Optional(Type.Array(ModelNameSchema(), { minItems: 1, maxItems: 100 })),
    forbid_providers: Type.Optional(Type.Array(ProviderSchema, { minItems: 1, maxItems: 20 })),
    require_provider: Type.Optional(ProviderSchema),
    max_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  },
  { additionalProperties: false, description: 'At least one action.' },
);

const PolicySchema = Type.Object(
  {
    id: Type.String({ description: 'pol_…' }),
    name: Type.String(),
    description: Type.String(),
    priority: Type.Integer({ description: 'Lower numbers are evaluated first.' }),
    enabled: Type.Boolean(),
    conditions: Type.Record(Type.String(), Type.Unknown()),
    actions: Type.Record(Type.String(), Type.Unknown(), {
      description: '`route_to` carries the target’s id (or model name) and its current `name`.',
    }),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { $id: 'RoutingPolicy', title: 'RoutingPolicy' },
);

const PolicyIdParams = Type.Object({ policy_id: ObjectIdSchema('pol_…') });
const IntentIdParams = Type.Object({ intent_id: ObjectIdSchema('int_…') });

function callerOf(principal: Principal): RoutingCaller {
  return { accountId: principal.accountId, tier: principal.tier, scopes: principal.scopes };
}

export function routingRoutes(app: App, services: Services): void {
  const { routing } = services;
  /** The caller, once the conversation the body names (if any) is known to be theirs (else 404). */
  const checkedCaller = async (
    request: FastifyRequest,
    body: { conversation_id?: string; user_id?: string },
  ): Promise<RoutingCaller> => {
    const principal = principalOf(request);
    await routing.checkConversation(
      principal.accountId,
      body.conversation_id ?? null,
      body.user_id ?? null,
    );
    return callerOf(principal);
  };
  app.addSchema(IntentSchema);
  app.addSchema(PolicySchema);

  const policyJson = async (accountId: string, policy: RoutingPolicy) => {
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
  };

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
        body: Type.Object(
          {
            ...commonParameters(),
            message: MessageSchema('The message to classify.'),
            conversation_id: Type.Optional(
              ObjectIdSchema('A conversation of the account the message belongs to.'),
            ),
            model: Type.Optional(
              ModelNameSchema('A chat model to classify with (default: the shipped classifier).'),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ success: Type.Boolean(), intent: Type.Ref('RoutingIntent') }),
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const caller = await checkedCaller(request, body);
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
        body: Type.Object(
          {
            ...commonParameters(),
            message: MessageSchema('The message to route.'),
            conversation_id: Type.Optional(
              ObjectIdSchema(
                'A conversation of the account: its last routed turn guides follow-ups.',
              ),
            ),
            context: Type.Optional(
              Type.Object(
                {
                  history: Type.Optional(
                    Type.Array(
                      Type.Object(
                        {
                          role: Type.String({ minLength: 1, maxLength: 20 }),
                          content: Type.String({ maxLength: maxRoutedMessageLength }),
                        },
                        { additionalProperties: false },
                      ),
                      { maxItems: 50, description: 'Earlier turns, oldest first.' },
                    ),
                  ),
                  preferences: Type.Optional(
                    Type.Object(
                      {
                        preferred_models: Type.Optional(
                          Type.Array(ModelNameSchema(), { maxItems: 10 }),
                        ),
                        routing_strategy: Type.Optional(
                          oneOf(routingStrategies, 'How a model is chosen (default balanced).'),
                        ),
                      },
                      { additionalProperties: false },
                    ),
                  ),
                },
                { additionalProperties: false },
              ),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: RouteResponseSchema },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const caller = await checkedCaller(request, body);
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
        body: Type.Object(
          {
            ...commonParameters(),
            message: MessageSchema('The message as the user sent it.'),
            selected_route: Type.String({
              minLength: 1,
              maxLength: 200,
              description: 'Where it should go: an agent or pipeline id or name, or a model name.',
            }),
            route_type: Type.Optional(RouteTypeSchema),
            conversation_id: Type.Optional(ObjectIdSchema('A conversation of the account.')),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            success: Type.Boolean(),
            message: Type.String(),
            feedback_id: Type.String({ description: 'rfb_…' }),
            route_to: Type.String(),
            route_type: RouteTypeSchema,
            route_id: Type.String(),
            notice: Type.Union([Type.String(), Type.Null()]),
          }),
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const caller = await checkedCaller(request, body);
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

  const PolicyBody = (required: boolean) =>
    Type.Object(
      {
        ...commonParameters(),
        name: required
          ? Type.String({ minLength: 1, maxLength: 200 })
          : Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        description: Type.Optional(Type.String({ maxLength: 2000 })),
        priority: Type.Optional(
          Type.Integer({
            minimum: 0,
            maximum: 10_000,
            description: 'Lower numbers are evaluated first (default 100).',
          }),
        ),
        enabled: Type.Optional(Type.Boolean()),
        conditions: Type.Optional(ConditionsSchema),
        actions: required ? ActionsSchema : Type.Optional(ActionsSchema),
      },
      { additionalProperties: false },
    );

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
      const body = request.body;
      const policy = await routing.createPolicy(accountId, {
        name: body.name,
        description: body.description,
        priority: body.priority,
        enabled: body.enabled,
        conditions: body.conditions,
        actions: body.actions,
      });
      return reply.code(201).send(await policyJson(accountId, policy));
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
        policies: await Promise.all(policies.map((policy) => policyJson(accountId, policy))),
      };
    },
  );

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
      return policyJson(accountId, await routing.getPolicy(accountId, request.params.policy_id));
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
      const body = request.body;
      const policy = await routing.updatePolicy(accountId, request.params.policy_id, {
        name: body.name,
        description: body.description,
        priority: body.priority,
        enabled: body.enabled,
        conditions: body.conditions,
        actions: body.actions,
      });
      return policyJson(accountId, policy);
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
        response: {
          200: Type.Object({ success: Type.Boolean(), message: Type.String(), id: Type.String() }),
        },
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
