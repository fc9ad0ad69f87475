// The people who sign in through single sign-on, as the platform knows them: provisioned on first
// sign-in into the account their claims name, with a key minted for them (its secret thrown away:
// only sessions use it) whose scopes are set from their claims at every sign-in. A person whose
// claims now name another account gets a new key there (the old one is revoked, ending its
// sessions); one whose key an administrator revoked gets a new key at their next sign-in, if their
// claims still grant them access.
import type { Kysely } from 'kysely';
import type { Scope } from '../../../auth/scopes.js';
import { AppError, NotFoundError } from '../../../errors/app-error.js';
import { newId } from '../../../ids.js';
import type { DatabaseSchema } from '../../../storage/schema.js';
import type { Account } from '../account.js';
import type { AccountService } from '../account-service.js';
import type { CredentialRecord } from '../api-key.js';
import { platformOperator, type ApiKeyService } from '../api-key-service.js';
import type { ApiKeysRepository } from '../api-keys.repository.js';
import type { SsoUserRecord, SsoUsersRepository, SsoUserWithKey } from './sso-users.repository.js';

export interface ProvisionInput {
  issuer: string;
  subject: string;
  /** null: the platform owner's account. */
  accountId: string | null;
  email: string | null;
  name: string | null;
  roles: string[];
  scopes: Scope[];
}

export interface SsoProvisioningOptions {
  users: SsoUsersRepository;
  apiKeys: ApiKeyService;
  accounts: AccountService;
  keys: Pick<ApiKeysRepository, 'findInAccount' | 'findCredentialByHash'>;
  isUniqueViolation: (error: unknown) => boolean;
  /** The tier of the owner account's people (that account has no tier of its own). */
  ownerTier: string;
  now: () => number;
}

export interface Provisioned {
  user: SsoUserRecord;
  /** The person's key as sessions check it. */
  credential: CredentialRecord;
}

export class SsoProvisioning {
  constructor(private readonly options: SsoProvisioningOptions) {}

  async provision(input: ProvisionInput, retried = false): Promise<Provisioned> {
    const { users } = this.options;
    const account = await this.accountOf(input.accountId);
    const existing = await users.findUser(input.issuer, input.subject);
    const at = new Date(this.options.now()).toISOString();
    const profile = { email: input.email, name: input.name, roles: input.roles, lastLoginAt: at };
    if (existing !== undefined && !existing.keyRevoked && existing.accountId === account.id) {
      await users.setKeyScopes(existing.apiKeyId, input.scopes);
      const user = { ...existing, ...profile };
      await users.updateUser(user);
      return { user, credential: await this.credentialOf(account.id, existing.apiKeyId) };
    }
    try {
      return await this.mintKey(input, account, existing, at);
    } catch (error) {
      // Two first sign-ins of one person at once: the other stored them; use what it stored.
      if (!retried && existing === undefined && this.options.isUniqueViolation(error)) {
        return this.provision(input, true);
      }
      throw error;
    }
  }

  /** A new key for the person (first sign-in, another account, or their key was revoked). */
  private async mintKey(
    input: ProvisionInput,
    account: Account,
    existing: SsoUserWithKey | undefined,
    at: string,
  ): Promise<Provisioned> {
    const { apiKeys, users } = this.options;
    if (existing !== undefined && !existing.keyRevoked) {
      await apiKeys.revoke(existing.accountId, existing.apiKeyId);
    }
    const created = apiKeys.prepare(account.id, {
      name: `sso: ${input.email ?? input.name ?? input.subject}`.slice(0, 200),
      scopes: input.scopes,
      tier: this.tierOf(account),
    });
    const user: SsoUserRecord = {
      id: existing?.id ?? newId('ssou'),
      issuer: input.issuer,
      subject: input.subject,
      accountId: account.id,
      apiKeyId: created.record.id,
      email: input.email,
      name: input.name,
      roles: input.roles,
      createdAt: existing?.createdAt ?? at,
      lastLoginAt: at,
    };
    await users.transaction(async (db: Kysely<DatabaseSchema>) => {
      await apiKeys.store(created, db);
      if (existing === undefined) await users.insertUser(user, db);
      else await users.updateUser(user, db);
    });
    return { user, credential: await this.credentialOf(account.id, created.record.id) };
  }

  private async accountOf(accountId: string | null): Promise<Account> {
    if (accountId === null) {
      const owner = await this.options.accounts.ownerAccount();
      if (owner === undefined) throw new AppError('service_unavailable', 'No owner account yet.');
      return owner;
    }
    try {
      return await this.options.accounts.get(accountId);
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      throw new AppError(
        'sso_denied',
        `You signed in at the identity provider, but may not use this dashboard: the account '${accountId.slice(0, 64)}' your claims name does not exist here. Ask an administrator.`,
      );
    }
  }

  /** The account's tier (the owner's people get the owner tier), if it is still configured. */
  private tierOf(account: Account): string {
    const wanted = account.tier ?? this.options.ownerTier;
    const configured = this.options.apiKeys
      .tiersFor(platformOperator)
      .some((tier) => tier.name === wanted);
    return configured ? wanted : this.options.apiKeys.defaultTier;
  }

  private async credentialOf(accountId: string, keyId: string): Promise<CredentialRecord> {
    const record = await this.options.keys.findInAccount(accountId, keyId);
    const credential =
      record === undefined
        ? undefined
        : await this.options.keys.findCredentialByHash(record.keyHash);
    if (credential === undefined) throw new NotFoundError('API key', keyId);
    return credential;
  }
}
