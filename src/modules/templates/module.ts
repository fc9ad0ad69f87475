// The templates module, wired: the prompt template catalog (the built-in templates and those of
// the config file) and its HTTP plugin for app.ts to register.
import type { AppConfig } from '../../config/config.js';
import { TemplateCatalog } from './template-catalog.js';
import { templatesPlugin, type TemplatesPlugin } from './templates.routes.js';

export interface TemplatesModuleDependencies {
  readonly config: Pick<AppConfig, 'templates'>;
}

export interface TemplatesModule {
  /** The catalog: conversations render their system prompts from it. */
  readonly service: TemplateCatalog;
  readonly plugin: TemplatesPlugin;
}

export function createTemplatesModule(dependencies: TemplatesModuleDependencies): TemplatesModule {
  const service = new TemplateCatalog(dependencies.config.templates);
  // The catalog is memory alone: nothing to close.
  return {
    service,
    plugin: templatesPlugin(service),
  };
}
