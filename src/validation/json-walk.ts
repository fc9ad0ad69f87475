// One depth-first walk of a parsed JSON value, shared by the checks that look inside client
// documents (reserved keys, unstorable values). No recursion, and nothing allocated per value: the
// path to a finding is read off the stack of open containers only when a check asks for it.

/** One step of a path: an object's key, or an array's index. */
export type JsonStep = string | number;

/** Where the walk is: the steps to the value being looked at, plus `last` when given. */
export interface JsonCursor {
  path(last?: JsonStep): JsonStep[];
  /** Open containers above the value looked at (the document itself is depth 0). */
  readonly depth: number;
}

/**
 * What a walk looks for. Each check returns a finding to stop the walk with it, or null to go on.
 * `container` sees each object and array before its children (its path is the container's own);
 * `key` each own key of an object (its path ends with the key); `leaf` each string and number.
 */
export interface JsonChecks<T> {
  readonly container?: (value: object, at: JsonCursor) => T | null;
  readonly key?: (key: string, at: JsonCursor) => T | null;
  readonly leaf?: (value: string | number, at: JsonCursor) => T | null;
}

interface Frame {
  /** The object's own keys (null for an array). */
  keys: string[] | null;
  container: unknown[] | Record<string, unknown>;
  /** The next child to visit. */
  next: number;
}

/** The first finding of `checks` in `document`, in document order; null when there is none. */
export function walkJson<T>(document: unknown, checks: JsonChecks<T>): T | null {
  const stack: Frame[] = [];
  const cursor: JsonCursor = {
    path(last?: JsonStep): JsonStep[] {
      const steps: JsonStep[] = stack.map((frame) =>
        frame.keys === null ? frame.next - 1 : frame.keys[frame.next - 1]!,
      );
      if (last !== undefined) steps.push(last);
      return steps;
    },
    get depth() {
      return stack.length;
    },
  };
  const { container: onContainer, key: onKey, leaf: onLeaf } = checks;
  const open = (value: object): T | null => {
    if (onContainer !== undefined) {
      const found = onContainer(value, cursor);
      if (found !== null) return found;
    }
    if (Array.isArray(value)) {
      stack.push({ keys: null, container: value as unknown[], next: 0 });
      return null;
    }
    // Own keys only, `__proto__` included when JSON.parse or a database row defined it.
    const keys = Object.keys(value);
    if (onKey !== undefined) {
      for (const key of keys) {
        const found = onKey(key, cursor);
        if (found !== null) return found;
      }
    }
    stack.push({ keys, container: value as Record<string, unknown>, next: 0 });
    return null;
  };
  if (typeof document === 'object' && document !== null) {
    const found = open(document);
    if (found !== null) return found;
  } else if (
    onLeaf !== undefined &&
    (typeof document === 'string' || typeof document === 'number')
  ) {
    return onLeaf(document, cursor);
  }
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    const size = frame.keys === null ? (frame.container as unknown[]).length : frame.keys.length;
    if (frame.next >= size) {
      stack.pop();
      continue;
    }
    const index = frame.next;
    frame.next += 1;
    const child =
      frame.keys === null
        ? (frame.container as unknown[])[index]
        : (frame.container as Record<string, unknown>)[frame.keys[index]!];
    if (typeof child === 'object' && child !== null) {
      const found = open(child);
      if (found !== null) return found;
    } else if (onLeaf !== undefined && (typeof child === 'string' || typeof child === 'number')) {
      const found = onLeaf(child, cursor);
      if (found !== null) return found;
    }
  }
  return null;
}
