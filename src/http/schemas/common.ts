// Schemas shared by many routes: the error body and paging.
import Type, { type Static } from 'typebox';

export const ErrorBodySchema = Type.Object(
  {
    error: Type.Object(
      {
        message: Type.String(),
        type: Type.String(),
        code: Type.String(),
        param: Type.Union([Type.String(), Type.Null()]),
        limit: Type.Optional(
          Type.Integer({ description: 'On 429: the limit of the exhausted window.' }),
        ),
        window: Type.Optional(Type.String({ description: "On 429: 'minute' or 'day'." })),
        reset_at: Type.Optional(
          Type.String({ description: 'On 429: when that window starts afresh.' }),
        ),
        required_scope: Type.Optional(
          Type.String({
            description: 'On 403 insufficient_permissions: the scope that was missing.',
          }),
        ),
      },
      { additionalProperties: true },
    ),
  },
  {
    $id: 'ErrorBody',
    title: 'Error',
    description: "Every error's body; see the error catalog in the README for each code.",
  },
);

/** Query parameters a route does not use are ignored (the spec's common parameters among them). */
export const PageQuerySchema = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  offset: Type.Integer({ minimum: 0, default: 0 }),
});

export type PageQuery = Static<typeof PageQuerySchema>;

export const Timestamp = (description?: string) =>
  Type.String({ format: 'date-time', ...(description === undefined ? {} : { description }) });

export const NullableTimestamp = (description?: string) =>
  Type.Union([Timestamp(), Type.Null()], description === undefined ? {} : { description });
