// Accounts: the owner's, created on first start, and further ones the owner creates.
import type { Kysely } from 'kysely';
import type { ApiKeyService } from './api-key-service.js';
import type { ApiKeyRecord } from './api-key.js';
import type { AccountsRepository } from './accounts.repository.js';
import type { Account } from './account.js';
import type { DatabaseSchema } from '../../storage/schema.js';
import { NotFoundError } from '../../errors/app-error.js';
import { newId } from '../../ids.js';

export interface AccountWithAdminKey {
  account: Account;
  keyRecord: ApiKeyRecord;
  /** The account's first admin key, shown once. */
  adminKey: string;
}

export type BootstrapResult =
  | { created: false }
  | { created: true; account: Account; keyRecord: ApiKeyRecord; generatedKey: string | null };

export interface AccountServiceOptions {
  db: Kysely<DatabaseSchema>;
  accounts: AccountsRepository;
  apiKeys: ApiKeyService;
  isUniqueViolation: (error: unknown) => boolean;
  /** Tier of the owner's bootstrap admin key (the operator's own key should not be throttled). */
  ownerTier: string;
  now?: () => number;
}

export class AccountService {
  private readonly now: () => number;

  constructor(private readonly options: AccountServiceOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * On an empty database: creates the owner account and its admin key (`presetKey` when given).
   * Safe when several instances start together: the database lets only one owner exist.
   */
  async bootstrap(presetKey: string | null): Promise<BootstrapResult> {
    if ((await this.options.accounts.findOwner()) !== undefined) return { created: false };
    try {
      const result = await this.createWithAdminKey(
        'Platform owner',
        'owner',
        this.options.ownerTier,
        presetKey ?? undefined,
      );
      return {
        created: true,
        account: result.account,
        keyRecord: result.keyRecord,
        generatedKey: presetKey === null ? result.adminKey : null,
      };
    } catch (error) {
      if (this.options.isUniqueViolation(error)) return { created: false };
      throw error;
    }
  }

  create(name: string, tier?: string): Promise<AccountWithAdminKey> {
    return this.createWithAdminKey(name, 'member', tier);
  }

  async get(id: string): Promise<Account> {
    const account = await this.options.accounts.findById(id);
    if (account === undefined) throw new NotFoundError('Account', id);
    return account;
  }

  ownerAccount() {
    return this.options.accounts.findOwner();
  }

  list(page: { limit: number; offset: number }) {
    return this.options.accounts.list(page);
  }

  private async createWithAdminKey(
    name: string,
    kind: Account['kind'],
    tier: string | undefined,
    presetKey?: string,
  ): Promise<AccountWithAdminKey> {
    const id = newId('acct');
    const created = this.options.apiKeys.prepare(
      id,
      { name: `${name} admin key`, scopes: ['admin'], ...(tier === undefined ? {} : { tier }) },
      presetKey,
    );
    // A member account's ceiling follows the tier its first admin key was given; the owner's
    // account (the operator's) has none above its keys' own limits.
    const account: Account = {
      id,
      name,
      kind,
      createdAt: new Date(this.now()).toISOString(),
      tier: kind === 'owner' ? null : created.record.tier,
    };
    await this.options.db.transaction().execute(async (transaction) => {
      await this.options.accounts.insert(account, transaction);
      await this.options.apiKeys.store(created, transaction);
    });
    return { account, keyRecord: created.record, adminKey: created.key };
  }
}
