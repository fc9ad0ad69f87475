// The budgets' request and answer shapes (TypeBox): what Fastify validates and the OpenAPI
// document lists. Every string and number is bounded.
import Type from 'typebox';
import {
  commonParameters,
  ObjectIdSchema,
  Timestamp,
  UserIdSchema,
} from '../../http/schemas/common.js';

/** Dollars a limit may be: up to a billion (a micro-dollar count well inside 2^53). */
const Usd = (description: string) =>
  Type.Number({ minimum: 0, maximum: 1_000_000_000, description });

const ScopeSchema = Type.Union(
  [Type.Literal('account'), Type.Literal('key'), Type.Literal('user')],
  {
    description:
      'Whose calls the budget holds: the whole account, one of its keys, or one end user.',
  },
);

const PeriodSchema = Type.Union(
  [Type.Literal('day'), Type.Literal('week'), Type.Literal('month'), Type.Literal('total')],
  {
    description:
      'A calendar period in UTC (a week runs Monday to Sunday) after which the spend starts again from 0, or `total` (never resets).',
  },
);

const SoftLimit = Type.Union([Usd('USD'), Type.Null()], {
  description:
    'Past this spend (spent and reserved, the call included) answers carry `X-Budget-Warning`; null: none.',
});

export const CreateBudgetBody = Type.Object(
  {
    // The spec's common parameters are taken (and unused) as on every body; `user_id` here names
    // a `user` budget's end user.
    ...commonParameters(),
    scope: ScopeSchema,
    key_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'The key (`key_…`) of a `key` budget.',
      }),
    ),
    user_id: Type.Optional(
      UserIdSchema(
        'The end user of a `user` budget (`user_id`, OpenAI’s `user`, Anthropic’s `metadata.user_id`).',
      ),
    ),
    limit_usd: Usd('The most the calls under this budget may spend in one period, in USD.'),
    soft_limit_usd: Type.Optional(SoftLimit),
    period: PeriodSchema,
  },
  { additionalProperties: false },
);

export const UpdateBudgetBody = Type.Object(
  {
    ...commonParameters(),
    limit_usd: Type.Optional(Usd('The new limit, in USD.')),
    soft_limit_usd: Type.Optional(SoftLimit),
    period: Type.Optional(PeriodSchema),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const BudgetIdParams = Type.Object({ budget_id: ObjectIdSchema('bud_…') });

const Money = (description: string) => Type.Number({ description });

export const BudgetSchema = Type.Object(
  {
    id: Type.String({ description: 'bud_…' }),
    object: Type.Literal('budget'),
    scope: ScopeSchema,
    key_id: Type.Union([Type.String(), Type.Null()]),
    user_id: Type.Union([Type.String(), Type.Null()]),
    period: PeriodSchema,
    limit_usd: Money('USD, 6 decimals.'),
    soft_limit_usd: Type.Union([Money('USD, 6 decimals.'), Type.Null()]),
    spent_usd: Money('Settled spend of the current period, USD with 6 decimals.'),
    reserved_usd: Money(
      'Held now by calls under way (their worst case, until each is settled), USD with 6 decimals.',
    ),
    resets_at: Type.Union([Timestamp(), Type.Null()], {
      description:
        'When the current period ends and the spend starts again from 0; null for `total`.',
    }),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { $id: 'Budget', title: 'Budget' },
);

export const DeletedBudgetSchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('budget'),
  deleted: Type.Literal(true),
});
