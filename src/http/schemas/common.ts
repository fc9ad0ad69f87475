// Schemas shared by many routes: the error body and paging.
import Type, { type Static, type TArray, type TSchema } from 'typebox';

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
        limit_scope: Type.Optional(
          Type.String({
            description:
              "On 429: whose limit was reached: 'key' (this key's own) or 'account' (the ceiling of all the account's keys together).",
          }),
        ),
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
    description:
      "Every error's body; see the error catalog in docs/api.md, 'Errors', for each code.",
  },
);

/** Query parameters a route does not use are ignored (the spec's common parameters among them). */
/** Largest `offset` a list accepts (far past any real list, well inside a 32-bit integer). */
export const maxOffset = 1_000_000_000;

/** A list's `offset`: how many entries to skip. */
export const OffsetSchema = () => Type.Integer({ minimum: 0, maximum: maxOffset, default: 0 });

/** A list's `limit`: how many entries to return. */
export const LimitSchema = (defaultLimit = 20) =>
  Type.Integer({ minimum: 1, maximum: 100, default: defaultLimit });

/** Largest `max_tokens` a request may name (the model's own maximum is checked after). */
export const maxTokensLimit = 1_000_000;

/** A page of a list: its entries under `key`, the total, and the window asked for. */
export const PageSchema = <Key extends string, Item extends TSchema>(key: Key, item: Item) =>
  Type.Object({
    ...({ [key]: Type.Array(item) } as { [K in Key]: TArray<Item> }),
    total: Type.Integer({ description: 'Entries in the whole list.' }),
    limit: Type.Integer(),
    offset: Type.Integer(),
  });

export const PageQuerySchema = Type.Object({
  limit: LimitSchema(),
  offset: OffsetSchema(),
});

export type PageQuery = Static<typeof PageQuerySchema>;

export const Timestamp = (description?: string) =>
  Type.String({ format: 'date-time', ...(description === undefined ? {} : { description }) });

export const NullableTimestamp = (description?: string) =>
  Type.Union([Timestamp(), Type.Null()], description === undefined ? {} : { description });

/** The spec's `user_id`: who the request is for (conversations are kept per user). */
export const UserIdSchema = (description?: string) =>
  Type.String({
    minLength: 1,
    maxLength: 256,
    ...(description === undefined ? {} : { description }),
  });

/** An id the service made (`conv_…`, `agent_…`): long enough for every prefix, never longer. */
export const ObjectIdSchema = (description?: string) =>
  Type.String({
    minLength: 1,
    maxLength: 100,
    ...(description === undefined ? {} : { description }),
  });

/** A model name as the catalog lists it. */
export const ModelNameSchema = (description?: string) =>
  Type.String({
    minLength: 1,
    maxLength: 128,
    ...(description === undefined ? {} : { description }),
  });

/**
 * The spec's common parameters ("All endpoints accept these parameters"): spread into every body
 * and query schema, so a client that sends them everywhere never meets a 400 for it. A route that
 * has a use for one states it in its own schema (which then overrides this default text).
 */
export const commonParameters = () => ({
  user_id: Type.Optional(
    UserIdSchema('The spec’s common parameter; recorded where the operation has a use for it.'),
  ),
  conversation_id: Type.Optional(
    ObjectIdSchema('The spec’s common parameter; used where the operation has a conversation.'),
  ),
  model: Type.Optional(
    ModelNameSchema('The spec’s common parameter; used where the operation calls a model.'),
  ),
});

/** A failed run's or stage's error, as execution records carry it. */
export const ExecutionErrorSchema = Type.Object(
  {
    message: Type.String(),
    type: Type.String(),
    code: Type.String({ description: 'A code of the error catalog (docs/api.md, "Errors").' }),
  },
  { additionalProperties: true },
);
