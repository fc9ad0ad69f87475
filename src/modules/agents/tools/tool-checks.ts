// Save-time checks of a ToolAgent's `tools`: names unique, every knowledge base, agent and
// pipeline named is the account's own (else 404 naming the entry), and the outside sources'
// own checks (addresses, secrets) — see external-tools.ts.
import { AppError, InvalidParameterError } from '../../../errors/app-error.js';
import type { ToolChecks } from '../types/tool-agent.js';
import { isBuiltinEntry } from './agent-tools.js';
import type { ExternalTools } from './external-tools.js';

/** Which of the account's objects exist (the services that own them answer). */
export interface OwnedObjects {
  missingKnowledgeBases(accountId: string, ids: readonly string[]): Promise<string[]>;
  agentExists(accountId: string, id: string): Promise<boolean>;
  pipelineExists(accountId: string, id: string): Promise<boolean>;
}

export function toolChecks(objects: OwnedObjects, external: ExternalTools): ToolChecks {
  return {
    async prepare(accountId, entries, previous) {
      const names = new Set<string>();
      for (const [index, entry] of entries.entries()) {
        const param = `configuration.tools[${index}]`;
        const name = String(entry.name);
        if (names.has(name)) {
          throw new InvalidParameterError(`${param}.name`, `Two tools are named '${name}'.`);
        }
        names.add(name);
        if (entry.type === 'knowledge_search') {
          const ids = entry.knowledge_base_ids as string[];
          const missing = new Set(await objects.missingKnowledgeBases(accountId, ids));
          const at = ids.findIndex((id) => missing.has(id));
          if (at >= 0) {
            throw new AppError('not_found', `Knowledge base '${ids[at]}' not found.`, {
              param: `${param}.knowledge_base_ids[${at}]`,
            });
          }
        } else if (entry.type === 'agent') {
          if (!(await objects.agentExists(accountId, String(entry.agent_id)))) {
            throw new AppError('not_found', `Agent '${String(entry.agent_id)}' not found.`, {
              param: `${param}.agent_id`,
            });
          }
        } else if (entry.type === 'pipeline') {
          if (!(await objects.pipelineExists(accountId, String(entry.pipeline_id)))) {
            throw new AppError('not_found', `Pipeline '${String(entry.pipeline_id)}' not found.`, {
              param: `${param}.pipeline_id`,
            });
          }
        }
      }
      return external.prepareForSave(
        accountId,
        entries,
        previous?.filter((entry) => !isBuiltinEntry(entry)) ?? null,
      );
    },
    shown: (entries) => external.shown(entries),
  };
}
