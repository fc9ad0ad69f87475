// The HTTP shapes of usage: the query of GET /v1/usage and its answer.
import Type from 'typebox';
import {
  commonParameters,
  ModelNameSchema,
  ObjectIdSchema,
  Timestamp,
  UserIdSchema,
} from '../../http/schemas/common.js';

const figureProperties = {
  requests: Type.Integer({
    description:
      'Model calls: one per call on every route (stateless ones included), and one per model turn of agents and pipelines.',
  }),
  failed: Type.Integer({ description: 'Calls that ended in an error.' }),
  prompt_tokens: Type.Integer({
    description: 'Input tokens as the providers reported them (cached ones included).',
  }),
  completion_tokens: Type.Integer({
    description: 'Output tokens as the providers reported them (reasoning ones included).',
  }),
  total_tokens: Type.Integer({ description: 'Prompt plus completion tokens.' }),
  cached_input_tokens: Type.Integer({ description: 'Input tokens read from a prompt cache.' }),
  average_latency_ms: Type.Union([Type.Number(), Type.Null()], {
    description:
      'Mean model time of a call (a wait for approval is not in it); null without calls.',
  }),
  max_latency_ms: Type.Union([Type.Integer(), Type.Null()]),
  cost_usd: Type.Number({
    description:
      'Sum of the known costs in US dollars, to the micro-dollar (6 decimals). Calls whose cost is unknown are counted in `unpriced_requests` instead.',
  }),
  unpriced_requests: Type.Integer({
    description: 'Calls to a model without a price: their cost is unknown, never guessed.',
  }),
};

const FiguresSchema = Type.Object(figureProperties, { title: 'UsageFigures' });
const PointSchema = Type.Object(
  { start: Timestamp('Start of the bucket (UTC).'), ...figureProperties },
  { title: 'UsagePoint' },
);

const SourceSchema = Type.Union(
  [Type.Literal('chat'), Type.Literal('agent'), Type.Literal('pipeline')],
  {
    description:
      '`chat`: a call a request made itself (chat, completions, Responses, Messages, embeddings, audio, voice); `agent` or `pipeline`: a model turn of a run.',
  },
);

const GroupDimensionSchema = Type.Union([
  Type.Literal('key'),
  Type.Literal('model'),
  Type.Literal('user'),
  Type.Literal('route'),
  Type.Literal('deployment'),
]);

const nullableText = (description: string) =>
  Type.Optional(Type.Union([Type.String(), Type.Null()], { description }));

const GroupSchema = Type.Object(
  {
    key_id: nullableText("With `key`: the key (null: the service's own work)."),
    key_name: nullableText('With `key`: its name.'),
    display_key: nullableText('With `key`: its display form.'),
    model: nullableText('With `model`.'),
    user: nullableText('With `user`: the end user (null: none given).'),
    route: nullableText('With `route`: the route pattern.'),
    deployment: nullableText('With `deployment` (null: the model has no deployments).'),
    totals: FiguresSchema,
    points: Type.Array(PointSchema),
  },
  { title: 'UsageGroup' },
);

export const UsageQuerySchema = Type.Object({
  from: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'Start of the range (inclusive). Default: 7 days before `to`.',
    }),
  ),
  to: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'End of the range (exclusive). Default: now.',
    }),
  ),
  bucket: Type.Optional(
    Type.Union([Type.Literal('hour'), Type.Literal('day')], {
      description:
        'Size of a time bucket (UTC). Default: `hour` for ranges up to 2 days, else `day`. Hourly buckets cover at most 31 days, daily ones 366.',
    }),
  ),
  key_id: Type.Optional(ObjectIdSchema('Only the usage of this key of the account.')),
  ...commonParameters(),
  model: Type.Optional(
    ModelNameSchema(
      'Only the calls to this model (and, in `recent_activity`, the runs that made one).',
    ),
  ),
  user_id: Type.Optional(
    UserIdSchema(
      'Only the calls made for this end user (`user_id`, `user` or `metadata.user_id`).',
    ),
  ),
  group_by: Type.Optional(
    Type.Array(Type.String({ maxLength: 64 }), {
      maxItems: 5,
      description:
        'Any of `key`, `model`, `user`, `route`, `deployment`, comma-separated or repeated: `groups` then holds one group per combination of their values (the 100 that cost most).',
    }),
  ),
});

/** GET /v1/usage/export: the period and the filters of GET /v1/usage. */
export const UsageExportQuerySchema = Type.Object({
  from: UsageQuerySchema.properties.from,
  to: UsageQuerySchema.properties.to,
  key_id: UsageQuerySchema.properties.key_id,
  ...commonParameters(),
  model: UsageQuerySchema.properties.model,
  user_id: UsageQuerySchema.properties.user_id,
});

export const UsageResponseSchema = Type.Object({
  object: Type.Literal('usage'),
  from: Timestamp(),
  to: Timestamp(),
  bucket: Type.Union([Type.Literal('hour'), Type.Literal('day')]),
  buckets: Type.Array(Timestamp()),
  totals: FiguresSchema,
  points: Type.Array(PointSchema),
  by_key: Type.Array(
    Type.Object({
      key_id: Type.Union([Type.String(), Type.Null()], {
        description: "null: the service's own work (no key).",
      }),
      name: Type.Union([Type.String(), Type.Null()]),
      display_key: Type.Union([Type.String(), Type.Null()]),
      totals: FiguresSchema,
      points: Type.Array(PointSchema),
    }),
  ),
  by_model: Type.Array(
    Type.Object({
      model: Type.Union([Type.String(), Type.Null()], { description: 'The catalog name.' }),
      totals: FiguresSchema,
      points: Type.Array(PointSchema),
    }),
  ),
  by_source: Type.Array(
    Type.Object({
      source: SourceSchema,
      totals: FiguresSchema,
      points: Type.Array(PointSchema),
    }),
  ),
  group_by: Type.Array(GroupDimensionSchema, { description: 'The dimensions of `groups`.' }),
  groups: Type.Array(GroupSchema, {
    description:
      'One per combination of the `group_by` values that occurred, costliest first; empty without `group_by`.',
  }),
  groups_truncated: Type.Boolean({ description: 'More than 100 groups matched.' }),
  recent_activity: Type.Array(
    Type.Object({
      source: SourceSchema,
      id: Type.String({ description: 'use_… (a call a request made) or exec_… (a run).' }),
      key_id: Type.Union([Type.String(), Type.Null()]),
      model: Type.Union([Type.String(), Type.Null()], {
        description:
          "The call's model; a run's first model (its agent's configured model before any call).",
      }),
      models: Type.Array(Type.String(), { description: "Every model a run's calls used." }),
      route: Type.Union([Type.String(), Type.Null()], { description: "A call's route." }),
      end_user: Type.Union([Type.String(), Type.Null()]),
      conversation_id: Type.Union([Type.String(), Type.Null()], {
        description: "A run's conversation; null for a call.",
      }),
      agent_id: Type.Union([Type.String(), Type.Null()]),
      agent_name: Type.Union([Type.String(), Type.Null()]),
      pipeline_id: Type.Union([Type.String(), Type.Null()]),
      pipeline_name: Type.Union([Type.String(), Type.Null()]),
      status: Type.String({
        description: "A call's `ok`, `aborted` or error code; a run's status.",
      }),
      calls: Type.Integer({ description: 'Model calls (a run: of all its turns).' }),
      total_tokens: Type.Integer(),
      latency_ms: Type.Union([Type.Integer(), Type.Null()], {
        description: "Model time (a run: its calls' sum, not its waits); null: no call yet.",
      }),
      cost_usd: Type.Union([Type.Number(), Type.Null()], {
        description: 'null when a price is unknown.',
      }),
      created_at: Timestamp(),
    }),
  ),
});
