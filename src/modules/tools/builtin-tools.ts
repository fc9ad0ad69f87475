// The platform's own tools for a ToolAgent, one row per entry type: whether its calls only read,
// what saving an entry checks of the objects it names, and the tool it gives a run — knowledge-base
// search, web search and page reading (the WebAgent's parts), and the owner's other agents and
// pipelines, each run as a tool.
import { AppError } from '../../errors/app-error.js';
import type { BuiltinEntry, BuiltinType } from './tool-entries.js';
import type { ToolOutcome, ToolRun } from './tool.js';
import {
  anyObjectSchema,
  pipelineAsTool,
  type KnowledgeTools,
  type PipelineToolRun,
  type ToolParts,
} from './tool-parts.js';

/** Agents calling agents as tools stop here: a loop of agents calling each other ends. */
export const maxToolDepth = 3;

/** What the built-ins use: the knowledge bases, and the parts other modules give the registry. */
export interface BuiltinUses {
  readonly knowledge: KnowledgeTools;
  part<K extends keyof ToolParts>(key: K): ToolParts[K];
}

/** A built-in tool for one run, before it is named: what the model reads, and its call. */
export interface OpenedBuiltin {
  readonly description: string;
  readonly parameters: Record<string, unknown>;
  /** Failures the model should hear about are AppErrors (the registry words them). */
  call(args: Record<string, unknown>, signal: AbortSignal): Promise<ToolOutcome>;
}

export interface BuiltinKind<E extends BuiltinEntry> {
  /** Its calls only read: a call its instance was stopped in runs again by itself. */
  readonly readOnly: boolean;
  /** At save time: the objects the entry names are the account's (else a 404 naming the field). */
  check?(entry: E, accountId: string, param: string, uses: BuiltinUses): Promise<void>;
  /** The tool the entry gives one run. */
  open(entry: E, run: ToolRun, uses: BuiltinUses): OpenedBuiltin | Promise<OpenedBuiltin>;
}

const text = (value: unknown) => JSON.stringify(value, null, 1);

function requiredString(args: Record<string, unknown>, name: string): string {
  const value = args[name];
  if (typeof value !== 'string' || value.trim() === '') {
    throw new AppError('invalid_parameter', `'${name}' must be a non-empty string.`);
  }
  return value;
}

const queryParameters = {
  type: 'object',
  properties: { query: { type: 'string', description: 'What to look for.' } },
  required: ['query'],
};

const urlParameters = {
  type: 'object',
  properties: { url: { type: 'string', description: 'An http(s) URL.' } },
  required: ['url'],
};

/** A pipeline's run as the model hears it: its output, or why there is none. */
function pipelineOutcome(run: PipelineToolRun): ToolOutcome {
  if (run.status === 'completed') return { ok: true, content: text(run.output ?? {}) };
  if (run.status === 'waiting_for_approval') {
    throw new AppError(
      'conflict',
      `The pipeline's execution ${run.executionId} waits for a person's approval; it goes on once decided, but this call cannot wait for it.`,
    );
  }
  throw new AppError(
    run.error?.code ?? 'internal_error',
    `The pipeline's execution ${run.executionId} failed: ${run.error?.message ?? 'see the execution'}`,
  );
}

type Table = { readonly [T in BuiltinType]: BuiltinKind<Extract<BuiltinEntry, { type: T }>> };

const builtinTable: Table = {
  knowledge_search: {
    readOnly: true,
    async check(entry, accountId, param, { knowledge }) {
      const ids = entry.knowledge_base_ids;
      const missing = new Set(await knowledge.missingKnowledgeBases(accountId, ids));
      const at = ids.findIndex((id) => missing.has(id));
      if (at >= 0) {
        throw new AppError('not_found', `Knowledge base '${ids[at]}' not found.`, {
          param: `${param}.knowledge_base_ids[${at}]`,
        });
      }
    },
    open: (entry, run, { knowledge }) => ({
      description: 'Searches the knowledge bases for passages relevant to a query.',
      parameters: queryParameters,
      async call(args, signal) {
        const found = await knowledge.search(
          run.accountId,
          entry.knowledge_base_ids,
          requiredString(args, 'query'),
          { topK: entry.top_k ?? 5, minScore: 0, signal },
        );
        const passages = found.results.map(({ documentId, title, text, score, source }) => ({
          document_id: documentId,
          title,
          text,
          score,
          source,
        }));
        return { ok: true, content: text(passages) };
      },
    }),
  },
  web_search: {
    readOnly: true,
    open: (entry, _run, uses) => ({
      description: 'Searches the web; answers titles, URLs and snippets.',
      parameters: queryParameters,
      async call(args, signal) {
        const found = await uses.part('web').run(
          {
            fetch_pages: false,
            ...(entry.result_count === undefined ? {} : { result_count: entry.result_count }),
          },
          { query: requiredString(args, 'query') },
          signal,
        );
        return { ok: true, content: text(found.results) };
      },
    }),
  },
  read_page: {
    readOnly: true,
    open: (entry, _run, uses) => ({
      description: 'Reads a web page and answers its readable text.',
      parameters: urlParameters,
      async call(args, signal) {
        const url = requiredString(args, 'url');
        if (!/^https?:\/\//i.test(url)) {
          return { ok: false, content: `'${url}' is not an http(s) URL.` };
        }
        const read = await uses.part('web').run(
          {
            fetch_pages: true,
            ...(entry.max_page_chars === undefined ? {} : { max_page_chars: entry.max_page_chars }),
          },
          { urls: [url] },
          signal,
        );
        const pages = read.pages as unknown[];
        const errors = read.errors as Array<{ message: string }>;
        if (pages.length === 0 && errors.length > 0) {
          return { ok: false, content: errors[0]!.message };
        }
        return { ok: true, content: text(pages[0]) };
      },
    }),
  },
  agent: {
    readOnly: false,
    async check(entry, accountId, param, uses) {
      if (!(await uses.part('agents').owns(accountId, entry.agent_id))) {
        throw new AppError('not_found', `Agent '${entry.agent_id}' not found.`, {
          param: `${param}.agent_id`,
        });
      }
    },
    open: (entry, run, uses) => ({
      description: 'Asks another agent; give it the whole task as the query.',
      parameters: queryParameters,
      async call(args, signal) {
        if (run.depth + 1 > maxToolDepth) {
          return {
            ok: false,
            content: `Agents calling agents stop at depth ${maxToolDepth}; answer without this tool.`,
          };
        }
        const result = await uses
          .part('agents')
          .ask(run.accountId, entry.agent_id, requiredString(args, 'query'), {
            signal,
            depth: run.depth + 1,
            callerAccountId: run.callerAccountId,
          });
        return { ok: true, content: text(result) };
      },
    }),
  },
  pipeline: {
    readOnly: false,
    async check(entry, accountId, param, uses) {
      if ((await uses.part('pipelines').find(accountId, entry.pipeline_id)) === null) {
        throw new AppError('not_found', `Pipeline '${entry.pipeline_id}' not found.`, {
          param: `${param}.pipeline_id`,
        });
      }
    },
    // Its arguments are the run's inputs, as the pipeline's input_schema describes them (as on
    // /mcp); one deleted since the agent was saved says so when called.
    async open(entry, run, uses) {
      const pipelines = uses.part('pipelines');
      const found = await pipelines.find(run.accountId, entry.pipeline_id);
      return {
        ...(found === null
          ? { description: 'Runs a pipeline and answers its output.', parameters: anyObjectSchema }
          : pipelineAsTool(found)),
        call: async (args, signal) =>
          pipelineOutcome(
            await pipelines.run(run.accountId, entry.pipeline_id, args, { signal, apiKeyId: null }),
          ),
      };
    },
  },
};

/** The row of the entry's type (the table is keyed by the same `type` the entry has). */
export function builtinKind<E extends BuiltinEntry>(entry: E): BuiltinKind<E> {
  return builtinTable[entry.type] as unknown as BuiltinKind<E>;
}
