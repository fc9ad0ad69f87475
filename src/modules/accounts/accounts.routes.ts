// Accounts, administered by the platform owner's admin keys only, as a Fastify plugin over the
// account service.
import { access } from '../../auth/scopes.js';
import { featurePlugin, type FeaturePlugin } from '../../http/feature-plugin.js';
import { PageQuerySchema, PageSchema } from '../../http/schemas/common.js';
import type { AccountService } from './account-service.js';
import { AccountSchema, CreateAccountBody, CreatedAccountSchema } from './accounts.schemas.js';

/** The routes of accounts, registered by app.ts like any Fastify plugin. */
export function accountsPlugin(accounts: AccountService): FeaturePlugin {
  return featurePlugin('accounts', (app) => {
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
          body: CreateAccountBody,
          response: { 201: CreatedAccountSchema },
        },
      },
      async (request, reply) => {
        const { account, adminKey, keyRecord } = await accounts.create(
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
        const page = await accounts.list({ limit, offset });
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
  });
}
