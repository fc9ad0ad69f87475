// Seals the bearer tokens a tool source stores (`bearer_token`, write-only) with the operator's key
// `TOOL_SECRETS_KEY`: AES-256-GCM, a fresh 12-byte nonce per token, the account's id as associated
// data (a sealed token copied into another account's configuration does not open there). The key
// is read when used, so it never sits in the frozen configuration.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SecretSource } from '../../config/config.js';
import { InvalidParameterError } from '../../errors/app-error.js';
import { decodeToolSecretsKey, toolSecretsKeyVariable } from './tools.config.js';

const version = 'v1';
const nonceBytes = 12;
const tagBytes = 16;

function associatedData(accountId: string): Buffer {
  return Buffer.from(`tool-secret:${accountId}`, 'utf8');
}

export class SecretBox {
  constructor(private readonly secrets: SecretSource) {}

  private key(): Buffer | null {
    return decodeToolSecretsKey(this.secrets.get(toolSecretsKeyVariable));
  }

  /** Whether tokens can be sealed and opened (the operator set the key). */
  get available(): boolean {
    return this.key() !== null;
  }

  /**
   * The stored form of `token`; without the operator key a 400 naming `param` (the token is not
   * kept in the clear instead).
   */
  seal(accountId: string, token: string, param: string): string {
    const key = this.key();
    if (key === null) {
      throw new InvalidParameterError(
        param,
        `'${param}' cannot be stored: this deployment has no key for stored secrets. The operator ` +
          `must set ${toolSecretsKeyVariable} (64 hexadecimal characters or the base64 of 32 ` +
          `bytes); or name an environment variable with bearer_token_env instead.`,
      );
    }
    const nonce = randomBytes(nonceBytes);
    const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: tagBytes });
    cipher.setAAD(associatedData(accountId));
    const sealed = Buffer.concat([cipher.update(token, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return [version, nonce, tag, sealed]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join('.');
  }

  /** The token, or null when it cannot be opened (no key, another key, another account, damage). */
  open(accountId: string, stored: string): string | null {
    const key = this.key();
    if (key === null) return null;
    const [tagVersion, nonceText, tagText, sealedText, extra] = stored.split('.');
    if (tagVersion !== version || extra !== undefined) return null;
    if (nonceText === undefined || tagText === undefined || sealedText === undefined) return null;
    try {
      const nonce = Buffer.from(nonceText, 'base64url');
      const tag = Buffer.from(tagText, 'base64url');
      if (nonce.length !== nonceBytes || tag.length !== tagBytes) return null;
      const decipher = createDecipheriv('aes-256-gcm', key, nonce, { authTagLength: tagBytes });
      decipher.setAAD(associatedData(accountId));
      decipher.setAuthTag(tag);
      const plain = Buffer.concat([
        decipher.update(Buffer.from(sealedText, 'base64url')),
        decipher.final(),
      ]);
      return plain.toString('utf8');
    } catch {
      return null;
    }
  }
}

/** What a tool answers when its source's stored token cannot be opened. */
export const unreadableSecretMessage =
  'The stored bearer token of this tool source cannot be read with the current key ' +
  `(${toolSecretsKeyVariable} is unset or was changed); save the tool source's bearer_token again.`;
