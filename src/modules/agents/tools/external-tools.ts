// The tool sources outside the platform (MCP servers, OpenAPI documents), as a ToolAgent sees
// them: their entries' schemas, their save-time checks and their tools for one run — the tools
// module's ToolSources.
import type { OpenedToolSources, ToolSources } from '../../tools/tool-sources.js';

export interface ExternalTools {
  /**
   * Checks the outside entries (addresses, secrets) and answers every entry as it is stored:
   * built-in entries unchanged, given secrets encrypted, kept ones carried over from `previous`.
   */
  prepareForSave(
    accountId: string,
    entries: Array<Record<string, unknown>>,
    previous: Array<Record<string, unknown>> | null,
  ): Promise<Array<Record<string, unknown>>>;
  /** The stored entries as their owner sees them: no secret shown back. */
  shown(entries: Array<Record<string, unknown>>): Array<Record<string, unknown>>;
  open(
    accountId: string,
    entries: readonly Record<string, unknown>[],
    signal: AbortSignal,
  ): Promise<OpenedToolSources>;
}

type Entries = Array<Record<string, unknown>>;

/** The tools module's sources, in the agents' terms. */
export function externalTools(sources: ToolSources): ExternalTools {
  return {
    prepareForSave: async (accountId, entries, previous) =>
      (await sources.prepareForSave(accountId, entries, previous ?? [])) as Entries,
    shown: (entries) => sources.shown(entries) as Entries,
    open: (accountId, entries, signal) => sources.open(accountId, entries, signal),
  };
}
