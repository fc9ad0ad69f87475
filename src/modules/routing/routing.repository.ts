// Routing storage: intents, taught route examples (numbered per account so instances can load only
// what they have not seen), the per-account version row, and routing policies.
import { sql, type Kysely, type Selectable } from 'kysely';
import type { PolicyActions, PolicyConditions, RoutingPolicy } from './policies.js';
import type { Intent, IntentMetadata, RouteExample, RouteTarget, RouteType } from './types.js';
import type { IntentCategory } from './taxonomy.js';
import type { DatabaseSchema } from '../../storage/schema.js';

/** What a route call must know to tell whether its cached router and candidates are current. */
export interface RoutingFreshness {
  /** The account's routing version (0 before anything was taught or written). */
  version: number;
  exampleSeq: number;
  /** Counts and newest change times of the account's agents and pipelines. */
  candidates: string;
}

export type NewRouteExample = Omit<RouteExample, 'seq'>;

function toIntent(row: Selectable<DatabaseSchema['routing_intents']>): Intent {
  return {
    id: row.id,
    accountId: row.account_id,
    conversationId: row.conversation_id,
    text: row.text,
    category: row.category as IntentCategory,
    confidence: Number(row.confidence),
    metadata: JSON.parse(row.metadata) as IntentMetadata,
    route:
      row.route_type === null || row.route_ref === null
        ? null
        : { type: row.route_type as RouteType, ref: row.route_ref, name: row.route_name ?? '' },
    createdAt: row.created_at,
  };
}

function decodeVector(text: string | null): Float32Array | null {
  if (text === null) return null;
  return new Float32Array(new Uint8Array(Buffer.from(text, 'base64')).buffer);
}

export function encodeVector(vector: Float32Array): string {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64');
}

function toExample(row: Selectable<DatabaseSchema['route_examples']>): RouteExample {
  return {
    id: row.id,
    seq: Number(row.seq),
    message: row.message,
    messageKey: row.message_key,
    route: { type: row.route_type as RouteType, ref: row.route_ref, name: row.route_name },
    conversationId: row.conversation_id,
    embedding: decodeVector(row.embedding),
    embeddingModel: row.embedding_model,
    createdAt: row.created_at,
  };
}

function toPolicy(row: Selectable<DatabaseSchema['routing_policies']>): RoutingPolicy {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    description: row.description,
    priority: Number(row.priority),
    enabled: row.enabled === true || row.enabled === 1,
    conditions: JSON.parse(row.conditions) as PolicyConditions,
    actions: JSON.parse(row.actions) as PolicyActions,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export class RoutingRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  async insertIntent(intent: Intent): Promise<void> {
    await this.db
      .insertInto('routing_intents')
      .values({
        id: intent.id,
        account_id: intent.accountId,
        conversation_id: intent.conversationId,
        text: intent.text,
        category: intent.category,
        confidence: intent.confidence,
        complexity: intent.metadata.complexity,
        metadata: JSON.stringify(intent.metadata),
        route_type: intent.route?.type ?? null,
        route_ref: intent.route?.ref ?? null,
        route_name: intent.route?.name ?? null,
        created_at: intent.createdAt,
      })
      .execute();
  }

  async findIntent(accountId: string, id: string): Promise<Intent | undefined> {
    const row = await this.db
      .selectFrom('routing_intents')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return row === undefined ? undefined : toIntent(row);
  }

  /** Where the conversation's latest routed message went. */
  async lastRouteOf(accountId: string, conversationId: string): Promise<RouteTarget | null> {
    const row = await this.db
      .selectFrom('routing_intents')
      .select(['route_type', 'route_ref', 'route_name'])
      .where('account_id', '=', accountId)
      .where('conversation_id', '=', conversationId)
      .where('route_type', 'is not', null)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (row?.route_type == null || row.route_ref === null) return null;
    return { type: row.route_type as RouteType, ref: row.route_ref, name: row.route_name ?? '' };
  }

  /** The account's routing version alone (one primary-key read): policies change it too. */
  async version(accountId: string): Promise<number> {
    const row = await this.db
      .selectFrom('routing_state')
      .select('version')
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return Number(row?.version ?? 0);
  }

  /**
   * One query: the routing version and a fingerprint of the account's agents and pipelines
   * (count and newest `updated_at` of each), which changes whenever one is added, changed or
   * deleted.
   */
  async freshness(accountId: string): Promise<RoutingFreshness> {
    const row = await this.db
      .selectNoFrom((eb) => [
        eb
          .selectFrom('routing_state')
          .select('version')
          .where('account_id', '=', accountId)
          .as('version'),
        eb
          .selectFrom('routing_state')
          .select('example_seq')
          .where('account_id', '=', accountId)
          .as('example_seq'),
        eb
          .selectFrom('agents')
          .select((inner) => inner.fn.countAll<number>().as('count'))
          .where('account_id', '=', accountId)
          .as('agent_count'),
        eb
          .selectFrom('agents')
          .select((inner) => inner.fn.max('updated_at').as('newest'))
          .where('account_id', '=', accountId)
          .as('agent_newest'),
        eb
          .selectFrom('pipelines')
          .select((inner) => inner.fn.countAll<number>().as('count'))
          .where('account_id', '=', accountId)
          .as('pipeline_count'),
        eb
          .selectFrom('pipelines')
          .select((inner) => inner.fn.max('updated_at').as('newest'))
          .where('account_id', '=', accountId)
          .as('pipeline_newest'),
      ])
      .executeTakeFirstOrThrow();
    const values = row as Record<string, unknown>;
    return {
      version: Number(values.version ?? 0),
      exampleSeq: Number(values.example_seq ?? 0),
      candidates: `${String(values.agent_count)}|${String(values.agent_newest)}|${String(values.pipeline_count)}|${String(values.pipeline_newest)}`,
    };
  }

  /**
   * Stores an example as the account's next one (numbered under the version row's lock), after
   * removing older examples of the same message. Returns its number.
   */
  async addExample(
    accountId: string,
    example: NewRouteExample,
    maxExamples: number,
  ): Promise<{ seq: number } | { full: number }> {
    return this.db
      .transaction()
      .execute(async (transaction) => {
        const state = await transaction
          .insertInto('routing_state')
          .values({
            account_id: accountId,
            version: 1,
            example_seq: 1,
            updated_at: example.createdAt,
          })
          .onConflict((conflict) =>
            conflict.column('account_id').doUpdateSet({
              version: sql<number>`routing_state.version + 1`,
              example_seq: sql<number>`routing_state.example_seq + 1`,
              updated_at: example.createdAt,
            }),
          )
          .returning('example_seq')
          .executeTakeFirstOrThrow();
        await transaction
          .deleteFrom('route_examples')
          .where('account_id', '=', accountId)
          .where('message_key', '=', example.messageKey)
          .execute();
        const counted = await transaction
          .selectFrom('route_examples')
          .select((eb) => eb.fn.countAll<number>().as('total'))
          .where('account_id', '=', accountId)
          .executeTakeFirstOrThrow();
        const total = Number(counted.total);
        if (total >= maxExamples) {
          // Nothing of this call is kept: the transaction is rolled back by the throw.
          throw new ExamplesFullSignal(total);
        }
        const seq = Number(state.example_seq);
        await transaction
          .insertInto('route_examples')
          .values({
            id: example.id,
            account_id: accountId,
            seq,
            message: example.message,
            message_key: example.messageKey,
            route_type: example.route.type,
            route_ref: example.route.ref,
            route_name: example.route.name,
            conversation_id: example.conversationId,
            embedding: example.embedding === null ? null : encodeVector(example.embedding),
            embedding_model: example.embeddingModel,
            created_at: example.createdAt,
          })
          .execute();
        return { seq };
      })
      .catch((error: unknown) => {
        if (error instanceof ExamplesFullSignal) return { full: error.total };
        throw error;
      });
  }

  /** The account's examples numbered after `afterSeq`, in order, a page at a time. */
  async examplesAfter(accountId: string, afterSeq: number, limit: number): Promise<RouteExample[]> {
    const rows = await this.db
      .selectFrom('route_examples')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('seq', '>', afterSeq)
      .orderBy('seq', 'asc')
      .limit(limit)
      .execute();
    return rows.map(toExample);
  }

  async countExamples(accountId: string): Promise<number> {
    const row = await this.db
      .selectFrom('route_examples')
      .select((eb) => eb.fn.countAll<number>().as('total'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    return Number(row.total);
  }

  async listPolicies(accountId: string): Promise<RoutingPolicy[]> {
    const rows = await this.db
      .selectFrom('routing_policies')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('priority', 'asc')
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .execute();
    return rows.map(toPolicy);
  }

  async findPolicy(accountId: string, id: string): Promise<RoutingPolicy | undefined> {
    const row = await this.db
      .selectFrom('routing_policies')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return row === undefined ? undefined : toPolicy(row);
  }

  async countPolicies(accountId: string): Promise<number> {
    const row = await this.db
      .selectFrom('routing_policies')
      .select((eb) => eb.fn.countAll<number>().as('total'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    return Number(row.total);
  }

  /** Inserts or replaces a policy and raises the account's version, in one transaction. */
  async savePolicy(policy: RoutingPolicy, isNew: boolean): Promise<void> {
    await this.db.transaction().execute(async (transaction) => {
      const values = {
        name: policy.name,
        description: policy.description,
        priority: policy.priority,
        enabled: policy.enabled ? 1 : 0,
        conditions: JSON.stringify(policy.conditions),
        actions: JSON.stringify(policy.actions),
        updated_at: policy.updatedAt,
      };
      if (isNew) {
        await transaction
          .insertInto('routing_policies')
          .values({
            id: policy.id,
            account_id: policy.accountId,
            created_at: policy.createdAt,
            ...values,
          })
          .execute();
      } else {
        await transaction
          .updateTable('routing_policies')
          .set(values)
          .where('id', '=', policy.id)
          .where('account_id', '=', policy.accountId)
          .execute();
      }
      await bumpVersion(transaction, policy.accountId, policy.updatedAt);
    });
  }

  async deletePolicy(accountId: string, id: string, now: string): Promise<boolean> {
    return this.db.transaction().execute(async (transaction) => {
      const result = await transaction
        .deleteFrom('routing_policies')
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .executeTakeFirst();
      if (Number(result.numDeletedRows) === 0) return false;
      await bumpVersion(transaction, accountId, now);
      return true;
    });
  }
}

class ExamplesFullSignal extends Error {
  constructor(readonly total: number) {
    super('route examples full');
  }
}

async function bumpVersion(db: Kysely<DatabaseSchema>, accountId: string, now: string) {
  await db
    .insertInto('routing_state')
    .values({ account_id: accountId, version: 1, example_seq: 0, updated_at: now })
    .onConflict((conflict) =>
      conflict.column('account_id').doUpdateSet({
        version: sql<number>`routing_state.version + 1`,
        updated_at: now,
      }),
    )
    .execute();
}
