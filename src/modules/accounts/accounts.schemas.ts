// The HTTP shapes of accounts: an account as listed, and the create body and answer.
import Type from 'typebox';
import { commonParameters, Timestamp } from '../../http/schemas/common.js';

export const AccountSchema = Type.Object({
  id: Type.String({ description: 'acct_…' }),
  name: Type.String(),
  kind: Type.Union([Type.Literal('owner'), Type.Literal('member')]),
  created_at: Timestamp(),
  tier: Type.Union([Type.String(), Type.Null()], {
    description:
      "The tier of the account's rate-limit ceiling (all its keys' requests together); null for the owner's account, which has none above its keys' own limits.",
  }),
});

export const CreateAccountBody = Type.Object(
  {
    ...commonParameters(),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    tier: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          "Rate-limit tier of the first admin key and of the account's ceiling (all its keys together: the tier's `account_per_minute`/`account_per_day`). Default: 'free'.",
      }),
    ),
  },
  { additionalProperties: false },
);

export const CreatedAccountSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  created_at: Timestamp(),
  tier: Type.String({ description: "The tier of the account's rate-limit ceiling." }),
  admin_key: Type.String({ description: 'The full secret of the first admin key.' }),
  admin_key_id: Type.String(),
});
