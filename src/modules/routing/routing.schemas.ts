// The HTTP shapes of routing: request bodies, answers and the shared RoutingIntent and
// RoutingPolicy schemas of the published document.
import Type from 'typebox';
import { scopes } from '../../auth/scopes.js';
import {
  ModelNameSchema,
  ObjectIdSchema,
  Timestamp,
  commonParameters,
} from '../../http/schemas/common.js';
import { routingStrategies } from './model-selection.js';
import { intentCategories } from './taxonomy.js';
import { routeTypes } from './types.js';

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

export const IntentSchema = Type.Object(
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

const AlternativeSchema = Type.Object({
  route_to: Type.String(),
  route_type: RouteTypeSchema,
  route_id: Type.String({ description: 'Agent or pipeline id, or model name (an addition).' }),
  confidence: Type.Number(),
});

export const RouteResponseSchema = Type.Object({
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

export const PolicySchema = Type.Object(
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

export const PolicyIdParams = Type.Object({ policy_id: ObjectIdSchema('pol_…') });
export const IntentIdParams = Type.Object({ intent_id: ObjectIdSchema('int_…') });

export const ClassifyIntentBody = Type.Object(
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
);

const HistorySchema = Type.Array(
  Type.Object(
    {
      role: Type.String({ minLength: 1, maxLength: 20 }),
      content: Type.String({ maxLength: maxRoutedMessageLength }),
    },
    { additionalProperties: false },
  ),
  { maxItems: 50, description: 'Earlier turns, oldest first.' },
);

const PreferencesSchema = Type.Object(
  {
    preferred_models: Type.Optional(Type.Array(ModelNameSchema(), { maxItems: 10 })),
    routing_strategy: Type.Optional(
      oneOf(routingStrategies, 'How a model is chosen (default balanced).'),
    ),
  },
  { additionalProperties: false },
);

export const RouteBody = Type.Object(
  {
    ...commonParameters(),
    message: MessageSchema('The message to route.'),
    conversation_id: Type.Optional(
      ObjectIdSchema('A conversation of the account: its last routed turn guides follow-ups.'),
    ),
    context: Type.Optional(
      Type.Object(
        {
          history: Type.Optional(HistorySchema),
          preferences: Type.Optional(PreferencesSchema),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export const FeedbackBody = Type.Object(
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
);

export const FeedbackResponseSchema = Type.Object({
  success: Type.Boolean(),
  message: Type.String(),
  feedback_id: Type.String({ description: 'rfb_…' }),
  route_to: Type.String(),
  route_type: RouteTypeSchema,
  route_id: Type.String(),
  notice: Type.Union([Type.String(), Type.Null()]),
});

/** A policy's body: every field when it is created, any of them when it changes. */
export const PolicyBody = (required: boolean) =>
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

export const DeletedPolicySchema = Type.Object({
  success: Type.Boolean(),
  message: Type.String(),
  id: Type.String(),
});
