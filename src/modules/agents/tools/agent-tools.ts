// A ToolAgent's tools for one run: the built-ins of its configuration and the tools of its MCP
// servers and OpenAPI documents, in one box whose names are unique.
import type { Agent } from '../agent.js';
import type { ToolOpener } from '../agent-type.js';
import type { ToolBox, ToolOutcome, ToolSpec } from '../../tools/tool.js';
import { builtinTool, type BuiltinDependencies, type BuiltinTool } from './builtin-tools.js';
import { builtinToolTypes } from './tool-entries.js';
import type { ExternalTools } from './external-tools.js';

const builtinTypes: ReadonlySet<string> = new Set(builtinToolTypes);

export function isBuiltinEntry(entry: Record<string, unknown>): boolean {
  return typeof entry.type === 'string' && builtinTypes.has(entry.type);
}

export function agentToolOpener(
  builtins: BuiltinDependencies,
  external: ExternalTools,
): ToolOpener {
  return {
    async open(agent: Agent, entries, options): Promise<ToolBox> {
      const own: BuiltinTool[] = entries
        .filter(isBuiltinEntry)
        .map((entry) => builtinTool(entry, agent, builtins, options));
      const others = entries.filter((entry) => !isBuiltinEntry(entry));
      const outside =
        others.length === 0 ? null : await external.open(agent.accountId, others, options.signal);
      const byName = new Map<
        string,
        (args: Record<string, unknown>, signal: AbortSignal) => Promise<ToolOutcome>
      >();
      const tools: ToolSpec[] = [];
      for (const tool of own) {
        byName.set(tool.spec.name, (args, signal) => tool.call(args, signal));
        tools.push(tool.spec);
      }
      for (const spec of outside?.tools ?? []) {
        // Entry names are unique (checked at save time) and a server's tools carry their entry's
        // name as a prefix; a clash left anyway is skipped rather than shadowing a tool.
        if (byName.has(spec.name)) continue;
        byName.set(spec.name, (args, signal) => outside!.call(spec.name, args, signal));
        tools.push(spec);
      }
      return {
        tools,
        call(name, args, signal) {
          const call = byName.get(name);
          if (call === undefined) {
            return Promise.resolve({ ok: false, content: `There is no tool named '${name}'.` });
          }
          return call(args, signal);
        },
        close: () => outside?.close() ?? Promise.resolve(),
      };
    },
  };
}
