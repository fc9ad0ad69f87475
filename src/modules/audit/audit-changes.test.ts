// The changed fields a record keeps: only what differs, secret-bearing names redacted (and only
// those), client-named keys never reaching a prototype, the whole bounded; and the hashed form.
import { describe, expect, it } from 'vitest';
import { boundedChangesText, changesBudget, changesOf, redacted } from './audit-changes.js';
import { canonicalJson } from '../../validation/canonical-json.js';
import { genesisHash, recordHash } from './audit-record.js';

describe('audit changes', () => {
  it('keeps only the fields that differ, and everything on a creation or deletion', () => {
    const before = { name: 'a', limit_usd: 1, stages: [{ id: 1 }] };
    expect(changesOf(before, { ...before, limit_usd: 2 })).toEqual({
      before: { limit_usd: 1 },
      after: { limit_usd: 2 },
    });
    expect(changesOf(before, { ...before, stages: [{ id: 1 }] })).toBeNull();
    expect(changesOf(null, before)).toEqual({ before: null, after: before });
    expect(changesOf(before, null)).toEqual({ before, after: null });
  });

  it('redacts secret-bearing names at any depth, not limits that merely mention tokens', () => {
    const changes = changesOf(null, {
      configuration: {
        tools: [
          {
            name: 'crm',
            bearer_token: 'abc',
            bearer_token_env: 'TOOL_CRM',
            headers: { 'X-Key': 'k' },
          },
        ],
        max_tokens: 100,
        token_budget: 5000,
        client_secret: 's3cr3t',
      },
    });
    const text = JSON.stringify(changes);
    expect(text).not.toMatch(/abc|TOOL_CRM|"k"|s3cr3t/);
    expect(changes?.after).toEqual({
      configuration: {
        tools: [
          { name: 'crm', bearer_token: redacted, bearer_token_env: redacted, headers: redacted },
        ],
        max_tokens: 100,
        token_budget: 5000,
        client_secret: redacted,
      },
    });
  });

  it('keeps a client-named __proto__ as a member, never a prototype', () => {
    const hostile = JSON.parse('{"__proto__": {"polluted": true}, "name": "x"}') as Record<
      string,
      unknown
    >;
    const changes = changesOf(null, { configuration: hostile });
    const configuration = changes?.after?.configuration as Record<string, unknown>;
    expect(Object.hasOwn(configuration, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(boundedChangesText(changes)).toContain('"__proto__":{"polluted":true}');
  });

  it('bounds the text: long values are shown by length and hash', () => {
    const huge = {
      description: 'x'.repeat(100_000),
      stages: Array.from({ length: 2000 }, (_, i) => ({ i, n: 'y'.repeat(40) })),
    };
    const text = boundedChangesText(changesOf(null, huge))!;
    expect(text.length).toBeLessThanOrEqual(changesBudget);
    expect(text).toContain('"omitted_characters":100000');
  });

  it('hashes a canonical form: key order does not matter, every field does', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: null }] })).toBe('{"a":[{"c":null,"d":2}],"b":1}');
    const record = {
      id: 'aud_1',
      accountId: 'acct_1',
      seq: 1,
      at: '2030-01-01T00:00:00.000Z',
      actor: { kind: 'key' as const, keyId: 'key_1', sessionId: null, user: null },
      action: 'budget.update',
      target: { type: 'budget', id: 'bud_1' },
      changes: '{"after":{"limit_usd":2},"before":{"limit_usd":1}}',
      ip: '127.0.0.1',
      prevHash: genesisHash,
    };
    const hash = recordHash(record);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(recordHash({ ...record })).toBe(hash);
    for (const changed of [
      { ...record, seq: 2 },
      { ...record, ip: '127.0.0.2' },
      { ...record, actor: { ...record.actor, sessionId: 'sess_1' } },
      { ...record, prevHash: 'f'.repeat(64) },
      { ...record, target: { type: 'budget', id: null } },
    ]) {
      expect(recordHash(changed)).not.toBe(hash);
    }
  });
});
