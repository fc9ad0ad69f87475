// Accounts, administered by the platform owner's admin keys only.
import Type from 'typebox';
import { access } from '../../auth/scopes.js';
import type { Services } from '../../services.js';
import { commonParameters, PageQuerySchema, PageSchema, Timestamp } from '../schemas/common.js';
import type { App } from '../types.js';

const AccountSchema = Type.Object({
  id: Type.String({ description: 'acct_…' }),
  name: Type.String(),
  kind: Type.Union([Type.Literal('owner'), Type.Literal('member')]),
  created_at: Timestamp(),
  tier: Type.Union([Type.String(), Type.Null()], {
    description:
      "The tier of the account's rate-limit ceiling (all its keys' requests together); null for the owner's account, which has none above its keys' own limits.",
  }),
});

export function accountRoutes(app: App, services: Services): void {
  app.post(
    '/v1/accounts',
    {
      config: { access: access.owner() },
      schema: {
        operationId: 'createAccount',
        tags: ['Accounts'],
        summary: 'Create an account',
        description:
          "Creates an account and its first admin key. `admin_key` is shown only in this response. Keys of the new account see only the new account's objects.",
        body: Type.Object(
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
        ),
        response: {
          201: Type.Object({
            id: Type.String(),
            name: Type.String(),
            created_at: Timestamp(),
            tier: Type.String({ description: "The tier of the account's rate-limit ceiling." }),
            admin_key: Type.String({ description: 'The full secret of the first admin key.' }),
            admin_key_id: Type.String(),
          }),
        },
      },
    },
    async (request, reply) => {
      const { account, adminKey, keyRecord } = await services.accounts.create(
        request.body.name,
        request.body.tier,
      );
      return reply.code(201).send({
        id: account.id,
        name: account.name,
        created_at: account.createdAt,
        tier: keyRecord.tier,
        admin_key: adminKey,
        admin_key_id: keyRecord.id,
      });
    },
  );

  app.get(
    '/v1/accounts',
    {
      config: { access: access.owner() },
      schema: {
        operationId: 'listAccounts',
        tags: ['Accounts'],
        summary: 'List accounts',
        querystring: PageQuerySchema,
        response: {
          200: PageSchema('accounts', AccountSchema),
        },
      },
    },
    async (request) => {
      const { limit, offset } = request.query;
      const page = await services.accounts.list({ limit, offset });
      return {
        accounts: page.accounts.map((account) => ({
          id: account.id,
          name: account.name,
          kind: account.kind,
          created_at: account.createdAt,
          tier: account.tier ?? null,
        })),
        total: page.total,
        limit,
        offset,
      };
    },
  );
}
