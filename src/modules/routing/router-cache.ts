// Each account's router state in this process: its index of taught examples and its compiled
// policies, kept in a byte-bounded LRU cache and checked against the database on every use (one
// indexed read of the account's version row), so another instance's teaching is seen at once.
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { RoutingRepository } from './routing.repository.js';
import { CompiledPolicy } from './policies.js';
import { RouterIndex, type IndexedExample } from './router-index.js';
import { routeKey, type RouteExample } from './types.js';

export interface AccountRouter {
  readonly accountId: string;
  /** The database version this state reflects. */
  version: number;
  /** The newest example number in the index. */
  exampleSeq: number;
  index: RouterIndex;
  policies: CompiledPolicy[];
  /** Embedding model whose vectors the index holds (null: lexical only). */
  readonly embeddingModel: string | null;
  /** The agents/pipelines fingerprint the caller's candidate list was read at. */
  candidatesKey: string | null;
  candidates: unknown;
  /** Serialises syncs of this account. */
  pending: Promise<void>;
  rebuilding: boolean;
}

export interface RouterCacheOptions {
  repository: RoutingRepository;
  maxBytes: number;
  logger: Logger;
  /** The clock policy freshness is judged by, in milliseconds (default: performance.now). */
  now?: () => number;
}

/** Examples read per query when loading. */
const pageSize = 2000;
/** Up to this many new examples are added one by one; more rebuild the index. */
const incrementalLimit = 500;
/** An index up to this size is rebuilt before the call that found it stale is answered. */
const inlineRebuildLimit = 2000;

function toIndexed(example: RouteExample, embeddingModel: string | null): IndexedExample {
  return {
    key: example.messageKey,
    route: routeKey(example.route),
    text: example.message,
    embedding:
      embeddingModel !== null && example.embeddingModel === embeddingModel
        ? example.embedding
        : null,
  };
}

/** An account's compiled policies without its index: what a chat request naming a model needs. */
interface PolicyState {
  version: number;
  policies: CompiledPolicy[];
  /** When the version was last read (by the cache's clock). */
  checkedAt: number;
}

/**
 * How long an account's policies are used without reading its version again. A change made
 * through this instance applies at once (`forgetPolicies`); one made on another instance, within
 * this time. Reading the version on every chat request was ~15% of a proxied request's CPU.
 */
export const policyFreshnessMs = 500;

export class RouterCache {
  private readonly cache: LRUCache<string, AccountRouter>;
  private readonly policyStates: LRUCache<string, PolicyState>;
  private readonly loading = new Map<string, Promise<AccountRouter>>();

  constructor(private readonly options: RouterCacheOptions) {
    this.cache = new LRUCache<string, AccountRouter>({
      maxSize: options.maxBytes,
      maxEntrySize: options.maxBytes,
      sizeCalculation: (state) => Math.max(1, 4096 + state.index.approximateBytes),
    });
    // Policies alone are small (at most 200 per account, each bounded by its schema): a sixteenth
    // of the budget holds thousands of accounts' sets.
    const policyBytes = Math.max(64 * 1024, Math.floor(options.maxBytes / 16));
    this.policyStates = new LRUCache<string, PolicyState>({
      maxSize: policyBytes,
      maxEntrySize: policyBytes,
      sizeCalculation: (state) =>
        512 + state.policies.reduce((total, policy) => total + policy.approximateBytes, 0),
    });
  }

  /**
   * The account's policies, without building the account's example index, which a chat request
   * naming its model does not need: current with the database at the cost of one primary-key read
   * when nothing changed, read at most every `policyFreshnessMs`.
   */
  async policies(accountId: string): Promise<CompiledPolicy[]> {
    const now = (this.options.now ?? performance.now.bind(performance))();
    const known = this.policyStates.get(accountId);
    if (known !== undefined && now - known.checkedAt < policyFreshnessMs) return known.policies;
    const generation = this.policyGeneration;
    const version = await this.options.repository.version(accountId);
    const router = this.cache.peek(accountId);
    let policies: CompiledPolicy[];
    if (router !== undefined && router.version === version) policies = router.policies;
    else if (known !== undefined && known.version === version) policies = known.policies;
    else {
      // Read after the version: a change committed in between is picked up by the next read.
      policies = (await this.options.repository.listPolicies(accountId)).map(
        (policy) => new CompiledPolicy(policy),
      );
    }
    // Not kept if this instance changed policies meanwhile: what was read may predate the change.
    if (generation === this.policyGeneration) {
      this.policyStates.set(accountId, { version, policies, checkedAt: now });
    }
    return policies;
  }

  private policyGeneration = 0;

  /** This instance changed the account's policies: the next request reads them again. */
  forgetPolicies(accountId: string): void {
    this.policyGeneration += 1;
    this.policyStates.delete(accountId);
  }

  /** Bytes held now (for tests and the benchmark). */
  get bytes(): number {
    return this.cache.calculatedSize;
  }

  /**
   * The account's router, current with the database: `version`/`exampleSeq` come from the
   * caller's freshness read. New examples are added in place; many, or a stale IDF, rebuild.
   */
  async get(
    accountId: string,
    freshness: { version: number; exampleSeq: number },
    embeddingModel: string | null,
  ): Promise<AccountRouter> {
    let state = this.cache.get(accountId);
    if (state !== undefined && state.embeddingModel !== embeddingModel) {
      this.cache.delete(accountId);
      state = undefined;
    }
    if (state === undefined) {
      state = await this.load(accountId, embeddingModel);
    }
    if (state.version !== freshness.version) {
      const current = state;
      current.pending = current.pending.then(() => this.sync(current, freshness));
      await current.pending;
      this.remember(current);
    }
    if (state.index.stale && !state.rebuilding) {
      // A small index is rebuilt before answering (milliseconds); a large one in the background.
      if (state.index.size <= inlineRebuildLimit) {
        const current = state;
        current.pending = current.pending.then(() => this.rebuild(current));
        await current.pending;
      } else {
        this.rebuildInBackground(state);
      }
    }
    return state;
  }

  /** (Re-)stores a state whose index changed: the cache measures an entry when it is set. */
  private remember(state: AccountRouter): void {
    if (this.cache.get(state.accountId) !== state) return;
    this.cache.delete(state.accountId);
    this.cache.set(state.accountId, state);
  }

  /** Forgets an account (tests; a deleted account). */
  forget(accountId: string): void {
    this.cache.delete(accountId);
    this.policyStates.delete(accountId);
  }

  private load(accountId: string, embeddingModel: string | null): Promise<AccountRouter> {
    const running = this.loading.get(accountId);
    if (running !== undefined) return running;
    const promise = (async () => {
      const { repository } = this.options;
      // Read the version first: anything committed after it is picked up by the next sync.
      const freshness = await repository.freshness(accountId);
      const { examples, lastSeq } = await this.readExamples(accountId, 0);
      const index = await RouterIndex.build(
        examples.map((example) => toIndexed(example, embeddingModel)),
      );
      const policies = (await repository.listPolicies(accountId)).map(
        (policy) => new CompiledPolicy(policy),
      );
      const state: AccountRouter = {
        accountId,
        version: freshness.version,
        exampleSeq: Math.max(lastSeq, 0),
        index,
        policies,
        embeddingModel,
        candidatesKey: null,
        candidates: null,
        pending: Promise.resolve(),
        rebuilding: false,
      };
      this.cache.set(accountId, state);
      return state;
    })().finally(() => this.loading.delete(accountId));
    this.loading.set(accountId, promise);
    return promise;
  }

  private async readExamples(
    accountId: string,
    afterSeq: number,
    limit = Number.POSITIVE_INFINITY,
  ): Promise<{ examples: RouteExample[]; lastSeq: number }> {
    const examples: RouteExample[] = [];
    let last = afterSeq;
    for (;;) {
      const page = await this.options.repository.examplesAfter(accountId, last, pageSize);
      examples.push(...page);
      if (page.length > 0) last = page[page.length - 1]!.seq;
      if (page.length < pageSize || examples.length > limit) break;
    }
    return { examples, lastSeq: last };
  }

  private async sync(
    state: AccountRouter,
    freshness: { version: number; exampleSeq: number },
  ): Promise<void> {
    if (state.version === freshness.version) return;
    const { repository } = this.options;
    if (freshness.exampleSeq > state.exampleSeq) {
      const { examples, lastSeq } = await this.readExamples(
        state.accountId,
        state.exampleSeq,
        incrementalLimit,
      );
      if (examples.length > incrementalLimit) {
        const all = await this.readExamples(state.accountId, 0);
        state.index = await RouterIndex.build(
          all.examples.map((example) => toIndexed(example, state.embeddingModel)),
        );
        state.exampleSeq = all.lastSeq;
      } else {
        for (const example of examples) state.index.add(toIndexed(example, state.embeddingModel));
        state.exampleSeq = Math.max(state.exampleSeq, lastSeq);
      }
    }
    state.policies = (await repository.listPolicies(state.accountId)).map(
      (policy) => new CompiledPolicy(policy),
    );
    state.version = freshness.version;
  }

  /** A fresh index with current IDF statistics, swapped in when ready; the old one serves meanwhile. */
  private async rebuild(state: AccountRouter): Promise<void> {
    if (!state.index.stale) return;
    const { examples, lastSeq } = await this.readExamples(state.accountId, 0);
    state.index = await RouterIndex.build(
      examples.map((example) => toIndexed(example, state.embeddingModel)),
    );
    state.exampleSeq = Math.max(state.exampleSeq, lastSeq);
    this.remember(state);
  }

  private rebuildInBackground(state: AccountRouter): void {
    state.rebuilding = true;
    state.pending = state.pending
      .then(() => this.rebuild(state))
      .catch((error: unknown) => {
        this.options.logger.warn(
          { err: error, account_id: state.accountId },
          'router index rebuild failed; the previous index keeps serving',
        );
      })
      .finally(() => {
        state.rebuilding = false;
      });
  }
}
