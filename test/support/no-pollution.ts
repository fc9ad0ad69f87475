// Set up before every test file (vitest `setupFiles`): when the file ends, the built-in prototypes
// must be exactly as they were when it started. The service runs inside the test's own process
// (startTestApp), so a request of any suite that reaches a prototype (a client-named key such as
// `__proto__` walked into by a path setter) fails that suite here, even when no test looked.
import { afterAll, expect } from 'vitest';

const watched = {
  'Object.prototype': Object.prototype,
  'Array.prototype': Array.prototype,
  'Function.prototype': Function.prototype,
  'String.prototype': String.prototype,
} as const;

type Shape = Map<string | symbol, PropertyDescriptor>;

function shapeOf(target: object): Shape {
  return new Map(
    Reflect.ownKeys(target).map((key) => [key, Object.getOwnPropertyDescriptor(target, key)!]),
  );
}

/** What changed between two shapes: keys added or removed, values or accessors replaced. */
function changes(before: Shape, after: Shape): string[] {
  const found: string[] = [];
  for (const [key, descriptor] of after) {
    const old = before.get(key);
    if (old === undefined) found.push(`added ${String(key)}`);
    else if (
      old.value !== descriptor.value ||
      old.get !== descriptor.get ||
      old.set !== descriptor.set
    )
      found.push(`replaced ${String(key)}`);
  }
  for (const key of before.keys()) if (!after.has(key)) found.push(`removed ${String(key)}`);
  return found;
}

const before = Object.fromEntries(
  Object.entries(watched).map(([name, target]) => [name, shapeOf(target)]),
) as Record<keyof typeof watched, Shape>;
const prototypeOfObjectPrototype = Object.getPrototypeOf(Object.prototype) as unknown;

afterAll(() => {
  for (const [name, target] of Object.entries(watched) as Array<[keyof typeof watched, object]>) {
    expect(changes(before[name], shapeOf(target)), `${name} was changed by this test file`).toEqual(
      [],
    );
  }
  expect(Object.getPrototypeOf(Object.prototype), 'Object.prototype got a prototype').toBe(
    prototypeOfObjectPrototype,
  );
  expect(({} as Record<string, unknown>).polluted, '({}).polluted').toBeUndefined();
});
