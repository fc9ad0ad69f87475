// Remembers every registered path and its methods, so an unknown method on a known path is a 405.
import FindMyWay, { type HTTPMethod } from 'find-my-way';

export class RouteRegistry {
  private readonly router = FindMyWay({ ignoreTrailingSlash: false });
  private readonly methods = new Set<HTTPMethod>();

  add(method: string | string[], url: string): void {
    for (const one of Array.isArray(method) ? method : [method]) {
      const upper = one.toUpperCase() as HTTPMethod;
      if (this.router.hasRoute(upper, url)) continue;
      this.router.on(upper, url, () => undefined);
      this.methods.add(upper);
    }
  }

  /** The methods a path answers to; empty when no route has this path. */
  allowedMethods(path: string): string[] {
    return [...this.methods].filter((method) => this.router.find(method, path) !== null).sort();
  }
}
