// The tool sources outside the platform (MCP servers, OpenAPI documents), as a ToolAgent sees
// them: their entries' schemas, their save-time checks and their tools for one run.
// (Placeholder until the tool sources land: entries are accepted by shape only.)
import Type, { type TSchema } from 'typebox';
import type { ToolBox } from '../../tools/tool.js';
import { InvalidParameterError } from '../../../errors/app-error.js';

export const externalToolEntrySchemas: TSchema[] = [
  Type.Object(
    {
      type: Type.Literal('mcp'),
      name: Type.String({ pattern: '^[a-zA-Z0-9_-]{1,40}$' }),
      url: Type.String({ maxLength: 2000 }),
    },
    { additionalProperties: true },
  ),
];

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
  ): Promise<ToolBox>;
}

/** Without the tool sources: MCP and OpenAPI entries are refused at save time, saying why. */
export const unavailableExternalTools: ExternalTools = {
  prepareForSave(_accountId, entries) {
    const at = entries.findIndex((entry) => entry.type === 'mcp' || entry.type === 'openapi');
    if (at >= 0) {
      return Promise.reject(
        new InvalidParameterError(
          `configuration.tools[${at}].type`,
          'MCP and OpenAPI tools are not available in this build.',
        ),
      );
    }
    return Promise.resolve(entries);
  },
  shown: (entries) => entries,
  open: () => Promise.reject(new Error('MCP and OpenAPI tools are not available in this build')),
};
