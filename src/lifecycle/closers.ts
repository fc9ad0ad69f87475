// What a start-up has opened, closed in reverse order: the service's wiring adds each resource's
// closer as soon as the resource exists, so a step that fails half-way closes exactly what was
// started before it (no hand-written partial cleanup per step), and a normal shutdown is the same
// walk.

interface Closer {
  readonly name: string;
  readonly close: () => Promise<void> | void;
}

export class Closers {
  private readonly stack: Closer[] = [];
  private closing: Promise<void> | null = null;

  /** Registers what closes `name`; closers run last-added first. */
  add(name: string, close: () => Promise<void> | void): void {
    if (this.closing !== null) throw new Error(`Cannot add ${name}: already closing`);
    this.stack.push({ name, close });
  }

  /** Registers `resource`'s own close() under `name`, and hands the resource back. */
  started<T extends { close(): Promise<void> | void }>(name: string, resource: T): T {
    this.add(name, () => resource.close());
    return resource;
  }

  /** The names registered, in the order they will be closed. */
  get pending(): string[] {
    return this.stack.map((closer) => closer.name).reverse();
  }

  /**
   * Closes everything, last-added first. Every closer runs even when an earlier one fails; the
   * failures are thrown together afterwards, each named. Calling it again waits for the same walk.
   */
  closeAll(): Promise<void> {
    this.closing ??= this.walk();
    return this.closing;
  }

  private async walk(): Promise<void> {
    const failures: Error[] = [];
    while (this.stack.length > 0) {
      const closer = this.stack.pop()!;
      try {
        await closer.close();
      } catch (error) {
        failures.push(new Error(`closing ${closer.name} failed`, { cause: error }));
      }
    }
    if (failures.length === 1) throw failures[0]!;
    if (failures.length > 1) throw new AggregateError(failures, 'closing failed');
  }
}
