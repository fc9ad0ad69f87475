// POST/GET /v1/budgets and GET/PATCH/DELETE /v1/budgets/{budget_id}: an account's budgets (admin
// keys, their own account only), as a Fastify plugin over the budget service.
import Type from 'typebox';
import { access } from '../../auth/scopes.js';
import { featurePlugin, type FeatureApp, type FeaturePlugin } from '../../http/feature-plugin.js';
import { PageQuerySchema, PageSchema } from '../../http/schemas/common.js';
import { principalOf } from '../../http/types.js';
import { usdOf } from './budget-periods.js';
import type { BudgetService, BudgetView } from './budget-service.js';
import {
  BudgetIdParams,
  BudgetSchema,
  CreateBudgetBody,
  DeletedBudgetSchema,
  UpdateBudgetBody,
} from './budgets.schemas.js';

const tags = ['Budgets'];

function budgetJson(view: BudgetView) {
  const { budget } = view;
  return {
    id: budget.id,
    object: 'budget' as const,
    scope: budget.scope,
    key_id: budget.keyId,
    user_id: budget.userId,
    period: budget.period,
    limit_usd: usdOf(budget.limitMicros),
    soft_limit_usd: budget.softLimitMicros === null ? null : usdOf(budget.softLimitMicros),
    spent_usd: usdOf(view.spentMicros),
    reserved_usd: usdOf(view.reservedMicros),
    resets_at: view.resetsAt,
    created_at: budget.createdAt,
    updated_at: budget.updatedAt,
  };
}

export function budgetsPlugin(budgets: BudgetService): FeaturePlugin {
  return featurePlugin('budgets', (app) => {
    app.addSchema(BudgetSchema);
    collectionRoutes(app, budgets);
    budgetRoutes(app, budgets);
  });
}

function collectionRoutes(app: FeatureApp, budgets: BudgetService): void {
  app.post(
    '/v1/budgets',
    {
      config: { access: access.scopes('admin') },
      schema: {
        operationId: 'createBudget',
        tags,
        summary: 'Create a budget',
        description:
          "A spending limit on the caller's account, one of its keys (`key_id`) or one of its end users (`user_id`), per calendar period in UTC or in total. Every model call on the budget's path reserves its worst case before it is made, and is refused with 429 `budget_exceeded` when it does not fit. A budget made during a period starts from what the usage ledger recorded in it.",
        body: CreateBudgetBody,
        response: { 201: Type.Ref('Budget') },
      },
    },
    async (request, reply) => {
      const { accountId } = principalOf(request);
      const body = request.body;
      const view = await budgets.create(accountId, {
        scope: body.scope,
        keyId: body.key_id,
        userId: body.user_id,
        limitUsd: body.limit_usd,
        softLimitUsd: body.soft_limit_usd,
        period: body.period,
      });
      return reply.code(201).send(budgetJson(view));
    },
  );

  app.get(
    '/v1/budgets',
    {
      config: { access: access.scopes('admin') },
      schema: {
        operationId: 'listBudgets',
        tags,
        summary: 'List budgets',
        description: "The account's budgets, oldest first, each with its current period's spend.",
        querystring: PageQuerySchema,
        response: { 200: PageSchema('budgets', Type.Ref('Budget')) },
      },
    },
    async (request) => {
      const { accountId } = principalOf(request);
      const { limit, offset } = request.query;
      const page = await budgets.list(accountId, { limit, offset });
      return { budgets: page.views.map(budgetJson), total: page.total, limit, offset };
    },
  );
}

function budgetRoutes(app: FeatureApp, budgets: BudgetService): void {
  app.get(
    '/v1/budgets/:budget_id',
    {
      config: { access: access.scopes('admin') },
      schema: {
        operationId: 'getBudget',
        tags,
        summary: 'Get a budget',
        params: BudgetIdParams,
        response: { 200: Type.Ref('Budget') },
      },
    },
    async (request) => {
      const { accountId } = principalOf(request);
      return budgetJson(await budgets.get(accountId, request.params.budget_id));
    },
  );

  app.patch(
    '/v1/budgets/:budget_id',
    {
      config: { access: access.scopes('admin') },
      schema: {
        operationId: 'updateBudget',
        tags,
        summary: 'Change a budget',
        description:
          'Changes its limit, soft limit (null removes it) or period; its scope and subject stay. A lower limit holds from the next call on.',
        params: BudgetIdParams,
        body: UpdateBudgetBody,
        response: { 200: Type.Ref('Budget') },
      },
    },
    async (request) => {
      const { accountId } = principalOf(request);
      const body = request.body;
      const view = await budgets.update(accountId, request.params.budget_id, {
        limitUsd: body.limit_usd,
        softLimitUsd: body.soft_limit_usd,
        period: body.period,
      });
      return budgetJson(view);
    },
  );

  app.delete(
    '/v1/budgets/:budget_id',
    {
      config: { access: access.scopes('admin') },
      schema: {
        operationId: 'deleteBudget',
        tags,
        summary: 'Delete a budget',
        description: 'Calls on its path are no longer held by it (the ledger keeps their records).',
        params: BudgetIdParams,
        response: { 200: DeletedBudgetSchema },
      },
    },
    async (request) => {
      const { accountId } = principalOf(request);
      await budgets.delete(accountId, request.params.budget_id);
      return { id: request.params.budget_id, object: 'budget' as const, deleted: true as const };
    },
  );
}
