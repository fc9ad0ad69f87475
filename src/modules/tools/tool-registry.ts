// The one tool registry: every tool the platform offers, named by one rule (tool-names.ts) — to a
// ToolAgent's model, the tools of its configuration's entries (the built-ins' table, MCP servers'
// and OpenAPI documents' tools), checked when saved and opened for each run; and to a client of the
// platform's MCP server, the account's exposed agents and pipelines and knowledge_search
// (offered-tools.ts). An agent or a pipeline is the same tool in both: a pipeline's arguments are
// its inputs, as its input_schema describes them.
//
// The registry is made below the agents and pipelines modules, which are built after it and give it
// their parts once they exist (`provide`): so no module reaches above itself, and nothing offered
// needs a part before the service serves or takes a queued run.
import type { Logger } from 'pino';
import { AppError, InvalidParameterError } from '../../errors/app-error.js';
import type { FeatureName } from '../health/feature-catalog.js';
import { builtinKind, type BuiltinUses } from './builtin-tools.js';
import {
  OfferedTools,
  type OfferedTool,
  type ToolAnswer,
  type ToolCaller,
} from './offered-tools.js';
import type { ToolArguments } from './tool-arguments.js';
import {
  isSourceEntry,
  type BuiltinEntry,
  type StoredToolEntry,
  type ToolEntry,
} from './tool-entries.js';
import { ToolNames } from './tool-names.js';
import type { KnowledgeTools, ToolParts } from './tool-parts.js';
import type { OpenedToolSources, ToolSources } from './tool-sources.js';
import type { ToolBox, ToolOutcome, ToolRun, ToolSpec } from './tool.js';

export interface ToolRegistryOptions {
  /** MCP servers' and OpenAPI documents' tools (closed by the tools module). */
  readonly sources: ToolSources;
  readonly knowledge: KnowledgeTools;
  /** The checks of a call's arguments (`tools.max_argument_bytes`). */
  readonly arguments: ToolArguments;
  /** The feature switches: /mcp offers no tool of a switched-off feature. */
  readonly features: Readonly<Record<FeatureName, boolean>>;
  readonly logger: Logger;
}

/** A tool of a run's box: what the model sees, and its call. */
interface BoxTool {
  readonly spec: ToolSpec;
  call(args: Record<string, unknown>, signal: AbortSignal): Promise<ToolOutcome>;
}

/** A failure the model should hear about, worded for it; anything else is rethrown. */
function outcomeOf(error: unknown): ToolOutcome {
  if (error instanceof AppError) return { ok: false, content: error.message };
  throw error;
}

/** Whether `requires_approval` of a built-in entry covers its tool. */
function needsApproval(entry: BuiltinEntry): boolean {
  const rule = entry.requires_approval;
  return rule === true || (Array.isArray(rule) && rule.includes(entry.name));
}

export class ToolRegistry {
  /** The checks of a call's arguments, for the model's calls and a person's edits alike. */
  readonly arguments: ToolArguments;
  private readonly given: { -readonly [K in keyof ToolParts]?: ToolParts[K] } = {};
  private readonly uses: BuiltinUses;
  private readonly offeredTools: OfferedTools;

  constructor(private readonly options: ToolRegistryOptions) {
    this.arguments = options.arguments;
    this.uses = { knowledge: options.knowledge, part: (key) => this.part(key) };
    this.offeredTools = new OfferedTools({
      knowledge: options.knowledge,
      agents: () => this.part('agents'),
      pipelines: () => this.part('pipelines'),
      features: options.features,
      logger: options.logger,
    });
  }

  /**
   * Takes parts owned by the modules built above this one (the agents module gives `agents` and
   * `web`, the pipelines module `pipelines`), each once, when that module is built.
   */
  provide(parts: Partial<ToolParts>): void {
    for (const key of Object.keys(parts) as Array<keyof ToolParts>) {
      if (this.given[key] !== undefined) throw new Error(`the tools' ${key} part is given twice`);
    }
    Object.assign(this.given, parts);
  }

  private part<K extends keyof ToolParts>(key: K): ToolParts[K] {
    const part = this.given[key];
    if (part === undefined) {
      throw new Error(`the tools' ${key} part was not given: its module gives it when built`);
    }
    return part;
  }

  /**
   * The entries to store for a ToolAgent's `tools` (validated against ToolEntrySchema, or read
   * back as stored): names unique, the knowledge bases, agents and pipelines named the account's
   * (a 404 naming `configuration.tools[i]…`), and the outside sources' own checks (addresses,
   * secrets); `previous` are the entries replaced, whose sealed tokens are kept.
   */
  async prepare(
    accountId: string,
    entries: readonly StoredToolEntry[],
    previous: readonly StoredToolEntry[] | null,
  ): Promise<StoredToolEntry[]> {
    const names = new Set<string>();
    for (const [index, entry] of entries.entries()) {
      const param = `configuration.tools[${index}]`;
      if (names.has(entry.name)) {
        throw new InvalidParameterError(`${param}.name`, `Two tools are named '${entry.name}'.`);
      }
      names.add(entry.name);
      if (!isSourceEntry(entry))
        await builtinKind(entry).check?.(entry, accountId, param, this.uses);
    }
    return this.options.sources.prepareForSave(accountId, entries, previous ?? []);
  }

  /** The stored entries as their owner sees them: no secret shown back. */
  shown(entries: readonly StoredToolEntry[]): ToolEntry[] {
    return this.options.sources.shown(entries);
  }

  /**
   * A run's tools from its entries, each name unique: the built-ins first (named as their
   * entries), then the outside sources' (`<entry>__<tool>`). Close the box when the run ends or
   * pauses.
   */
  async open(run: ToolRun, entries: readonly StoredToolEntry[]): Promise<ToolBox> {
    const names = new ToolNames();
    const builtins = entries
      .filter((entry): entry is BuiltinEntry => !isSourceEntry(entry))
      .map((entry) => ({ entry, name: names.take(entry.name) }));
    const sources = entries.filter(isSourceEntry);
    const [own, outside] = await Promise.allSettled([
      Promise.all(builtins.map(({ entry, name }) => this.openBuiltin(entry, name, run))),
      sources.length === 0
        ? Promise.resolve(null)
        : this.options.sources.open(run.accountId, sources, run.signal, names),
    ]);
    if (own.status === 'rejected') {
      if (outside.status === 'fulfilled') await outside.value?.close();
      throw own.reason;
    }
    if (outside.status === 'rejected') throw outside.reason;
    return boxOf(own.value, outside.value);
  }

  private async openBuiltin(entry: BuiltinEntry, name: string, run: ToolRun): Promise<BoxTool> {
    const kind = builtinKind(entry);
    const opened = await kind.open(entry, run, this.uses);
    return {
      spec: {
        name,
        description: entry.description ?? opened.description,
        parameters: opened.parameters,
        source: entry.name,
        requiresApproval: needsApproval(entry),
        idempotent: kind.readOnly || ('idempotent' in entry && entry.idempotent === true),
      },
      call: (args, signal) => opened.call(args, signal).catch(outcomeOf),
    };
  }

  /** The tools POST /mcp offers the account (offered-tools.ts). */
  offered(accountId: string): Promise<OfferedTool[]> {
    return this.offeredTools.list(accountId);
  }

  /** Calls an offered tool for a key of its account: scope, arguments, then the run. */
  callOffered(tool: OfferedTool, args: unknown, caller: ToolCaller): Promise<ToolAnswer> {
    return this.offeredTools.call(tool, args, caller);
  }
}

/** One box over a run's built-ins and its outside sources' tools (names unique across both). */
function boxOf(own: readonly BoxTool[], outside: OpenedToolSources | null): ToolBox {
  const byName = new Map(own.map((tool) => [tool.spec.name, tool]));
  return {
    tools: [...own.map((tool) => tool.spec), ...(outside?.tools ?? [])],
    call(name, args, signal) {
      const tool = byName.get(name);
      if (tool !== undefined) return tool.call(args, signal);
      if (outside !== null) return outside.call(name, args, signal);
      return Promise.resolve({ ok: false, content: `There is no tool named '${name}'.` });
    },
    close: () => outside?.close() ?? Promise.resolve(),
  };
}
