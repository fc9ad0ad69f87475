// The layout module, wired. Layouts are built in the text worker threads (text-pool/ runs
// layout-engine.ts there), so the module holds only its HTTP plugin over the pool it is lent.
import type { TextPool } from '../../text-pool/text-pool.js';
import { layoutPlugin, type LayoutPlugin } from './layout.routes.js';

export interface LayoutModuleDependencies {
  /** The text threads: Markdown lexing can take time far beyond linear, so it runs there. */
  readonly text: Pick<TextPool, 'layout'>;
}

export interface LayoutModule {
  readonly plugin: LayoutPlugin;
}

export function createLayoutModule(dependencies: LayoutModuleDependencies): LayoutModule {
  // The text threads belong to the service (services.ts closes them); layouts keep no state.
  return {
    plugin: layoutPlugin(dependencies.text),
  };
}
