// The HTTP shapes of usage: the query of GET /v1/usage and its answer.
import Type from 'typebox';
import {
  commonParameters,
  ModelNameSchema,
  ObjectIdSchema,
  Timestamp,
} from '../../http/schemas/common.js';

const figureProperties = {
  requests: Type.Integer({
    description: 'Answered chat turns (stored ones) plus agent and pipeline executions.',
  }),
  failed: Type.Integer({
    description: 'Executions that failed (failed chat turns are not stored).',
  }),
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Integer(),
  total_tokens: Type.Integer({
    description: 'Prompt plus completion tokens of turns, plus the tokens executions used.',
  }),
  average_latency_ms: Type.Union([Type.Number(), Type.Null()], {
    description: 'Mean time to answer a turn or finish an execution; null without data.',
  }),
  max_latency_ms: Type.Union([Type.Integer(), Type.Null()]),
};

const FiguresSchema = Type.Object(figureProperties, { title: 'UsageFigures' });
const PointSchema = Type.Object(
  { start: Timestamp('Start of the bucket (UTC).'), ...figureProperties },
  { title: 'UsagePoint' },
);

const SourceSchema = Type.Union([
  Type.Literal('chat'),
  Type.Literal('agent'),
  Type.Literal('pipeline'),
]);

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
      'Only the usage of this model (turns answered by it, runs of agents using it).',
    ),
  ),
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
        description: 'null: turns and runs stored before usage was attributed to keys.',
      }),
      name: Type.Union([Type.String(), Type.Null()]),
      display_key: Type.Union([Type.String(), Type.Null()]),
      totals: FiguresSchema,
      points: Type.Array(PointSchema),
    }),
  ),
  by_model: Type.Array(
    Type.Object({
      model: Type.Union([Type.String(), Type.Null()], {
        description: 'null: executions of agents without a model of their own, and pipeline runs.',
      }),
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
  recent_activity: Type.Array(
    Type.Object({
      source: SourceSchema,
      id: Type.String({ description: 'msg_… (the answer) or exec_…' }),
      key_id: Type.Union([Type.String(), Type.Null()]),
      model: Type.Union([Type.String(), Type.Null()]),
      conversation_id: Type.Union([Type.String(), Type.Null()]),
      agent_id: Type.Union([Type.String(), Type.Null()]),
      pipeline_id: Type.Union([Type.String(), Type.Null()]),
      status: Type.String({ description: 'finish_reason of a turn, status of a run.' }),
      total_tokens: Type.Integer(),
      latency_ms: Type.Union([Type.Integer(), Type.Null()]),
      created_at: Timestamp(),
    }),
  ),
});
