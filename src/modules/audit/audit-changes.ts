// What a record says changed: the fields that differ between a target's state before and after,
// with every value under a secret-bearing name replaced, bounded in size. Objects are built
// without a prototype, so a client-named key (`__proto__` in an agent's configuration) is a plain
// member, never a prototype.
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../validation/canonical-json.js';
import type { AuditChanges } from './audit-record.js';

/**
 * A name whose value is (or may carry) a credential: never written to a record. `token` only as a
 * word of its own (`bearer_token`, `access_token`), not `max_tokens` or `token_budget`; a tool's
 * `headers` may carry a credential of the tool's own.
 */
const secretName =
  /secret|(^|[_-])token($|[_-]env$)|password|passphrase|credential|api[_-]?key|private[_-]?key|authorization|cookie|^key$|^headers$|hash$/i;

export const redacted = '[redacted]';

/** The longest string kept whole in a record; a longer one is shown by its length and hash. */
const longestString = 2048;

/** The largest canonical `changes` text of a record (the column's check allows 64 KiB). */
export const changesBudget = 32_768;

type Plain = Record<string, unknown>;

function isPlainObject(value: unknown): value is Plain {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function summary(text: string): Plain {
  const out: Plain = Object.create(null) as Plain;
  out.omitted_characters = text.length;
  out.sha256 = createHash('sha256').update(text).digest('hex');
  return out;
}

/** A JSON value with secret-bearing members replaced and long strings summarised. */
export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return value.length > longestString ? summary(value) : value;
  if (value === null || typeof value !== 'object') return value;
  if (depth > 16) return redacted;
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  const out: Plain = Object.create(null) as Plain;
  for (const key of Object.keys(value)) {
    const member = (value as Plain)[key];
    if (member === undefined) continue;
    out[key] = secretName.test(key) && member !== null ? redacted : redact(member, depth + 1);
  }
  return out;
}

/** Whether two JSON values are the same value. */
function same(left: unknown, right: unknown): boolean {
  return canonicalJson(left) === canonicalJson(right);
}

/**
 * The changed fields of a target: on a creation every field after, on a deletion every field
 * before, on an update only those that differ (null when none did). Values are redacted.
 */
export function changesOf(before: Plain | null, after: Plain | null): AuditChanges | null {
  if (before === null && after === null) return null;
  if (before === null || after === null) {
    return {
      before: before === null ? null : sideOf(before),
      after: after === null ? null : sideOf(after),
    };
  }
  const changedBefore: Plain = Object.create(null) as Plain;
  const changedAfter: Plain = Object.create(null) as Plain;
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const was = before[key] ?? null;
    const now = after[key] ?? null;
    if (same(was, now)) continue;
    changedBefore[key] = was;
    changedAfter[key] = now;
  }
  if (Object.keys(changedAfter).length === 0) return null;
  return { before: sideOf(changedBefore), after: sideOf(changedAfter) };
}

function sideOf(fields: Plain): Plain {
  return redact(fields) as Plain;
}

/**
 * The canonical text of `changes`, within `changesBudget`: a side too large is replaced by its
 * size and hash (the fields are named, their values not kept).
 */
export function boundedChangesText(changes: AuditChanges | null): string | null {
  if (changes === null) return null;
  const redactedChanges = {
    before: changes.before === null ? null : redact(changes.before),
    after: changes.after === null ? null : redact(changes.after),
  };
  const text = canonicalJson(redactedChanges);
  if (text.length <= changesBudget) return text;
  const shrink = (side: unknown) => {
    if (!isPlainObject(side)) return side;
    const out: Plain = Object.create(null) as Plain;
    for (const key of Object.keys(side).slice(0, 200)) {
      const member = canonicalJson(side[key]);
      out[key.slice(0, 200)] = member.length > 512 ? summary(member) : side[key];
    }
    return out;
  };
  const shrunk = canonicalJson({
    before: shrink(redactedChanges.before),
    after: shrink(redactedChanges.after),
  });
  if (shrunk.length <= changesBudget) return shrunk;
  return canonicalJson({
    before: summary(canonicalJson(redactedChanges.before)),
    after: summary(canonicalJson(redactedChanges.after)),
  });
}
