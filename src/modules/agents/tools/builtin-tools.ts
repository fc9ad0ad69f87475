// The platform's own tools for a ToolAgent: knowledge-base search, web search and page reading
// (the WebAgent's parts), and the owner's other agents and pipelines, each run as a tool.
import type { Agent } from '../agent.js';
import type { KnowledgeSearcher } from '../agent-type.js';
import type { ToolOutcome, ToolSpec } from '../../tools/tool.js';
import { AppError } from '../../../errors/app-error.js';
import { isIdempotent, needsApproval } from './tool-entries.js';

/** What the built-ins need from the rest of the service (wired by the agents module). */
export interface BuiltinDependencies {
  knowledge: KnowledgeSearcher;
  /** Runs the WebAgent's search and page reading with this configuration and input. */
  web(
    configuration: Record<string, unknown>,
    input: { query?: string; urls?: string[] },
    signal: AbortSignal,
  ): Promise<Record<string, unknown>>;
  /** Runs another agent of `owner`'s account (one level deeper). */
  agent(
    owner: Agent,
    agentId: string,
    query: string,
    options: { signal: AbortSignal; depth: number; callerAccountId: string },
  ): Promise<Record<string, unknown>>;
  /** Runs a pipeline of the account to its end (recorded as its own execution). */
  pipeline(
    accountId: string,
    pipelineId: string,
    inputs: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>>;
}

/** Agents calling agents as tools stop here: a loop of agents calling each other ends. */
export const maxToolDepth = 3;

export interface BuiltinTool {
  spec: ToolSpec;
  call(args: Record<string, unknown>, signal: AbortSignal): Promise<ToolOutcome>;
}

const text = (value: unknown) => JSON.stringify(value, null, 1);

function requiredString(args: Record<string, unknown>, name: string): string {
  const value = args[name];
  if (typeof value !== 'string' || value.trim() === '') {
    throw new AppError('invalid_parameter', `'${name}' must be a non-empty string.`);
  }
  return value;
}

/** A failure the model should hear about, worded for it; anything else is rethrown. */
function outcomeOf(error: unknown): ToolOutcome {
  if (error instanceof AppError) return { ok: false, content: error.message };
  throw error;
}

/** The built-in tool of one configuration entry. */
export function builtinTool(
  entry: Record<string, unknown>,
  owner: Agent,
  dependencies: BuiltinDependencies,
  options: { depth: number; callerAccountId: string },
): BuiltinTool {
  const name = String(entry.name);
  const described = typeof entry.description === 'string' ? entry.description : undefined;
  const spec = (description: string, parameters: Record<string, unknown>): ToolSpec => ({
    name,
    description: described ?? description,
    parameters,
    source: name,
    requiresApproval: needsApproval(entry, name),
    idempotent: isIdempotent(entry),
  });
  const guarded =
    (run: (args: Record<string, unknown>, signal: AbortSignal) => Promise<ToolOutcome>) =>
    (args: Record<string, unknown>, signal: AbortSignal) =>
      run(args, signal).catch(outcomeOf);
  const query = {
    type: 'object',
    properties: { query: { type: 'string', description: 'What to look for.' } },
    required: ['query'],
  };
  switch (entry.type) {
    case 'knowledge_search':
      return {
        spec: spec('Searches the knowledge bases for passages relevant to a query.', query),
        call: guarded(async (args, signal) => {
          const found = await dependencies.knowledge.search(
            owner.accountId,
            entry.knowledge_base_ids as string[],
            requiredString(args, 'query'),
            { topK: typeof entry.top_k === 'number' ? entry.top_k : 5, minScore: 0, signal },
          );
          return { ok: true, content: text(found.results) };
        }),
      };
    case 'web_search':
      return {
        spec: spec('Searches the web; answers titles, URLs and snippets.', query),
        call: guarded(async (args, signal) => {
          const found = await dependencies.web(
            {
              fetch_pages: false,
              ...(typeof entry.result_count === 'number'
                ? { result_count: entry.result_count }
                : {}),
            },
            { query: requiredString(args, 'query') },
            signal,
          );
          return { ok: true, content: text(found.results) };
        }),
      };
    case 'read_page':
      return {
        spec: spec('Reads a web page and answers its readable text.', {
          type: 'object',
          properties: { url: { type: 'string', description: 'An http(s) URL.' } },
          required: ['url'],
        }),
        call: guarded(async (args, signal) => {
          const url = requiredString(args, 'url');
          if (!/^https?:\/\//i.test(url)) {
            return { ok: false, content: `'${url}' is not an http(s) URL.` };
          }
          const read = await dependencies.web(
            {
              fetch_pages: true,
              ...(typeof entry.max_page_chars === 'number'
                ? { max_page_chars: entry.max_page_chars }
                : {}),
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
        }),
      };
    case 'agent':
      return {
        spec: spec('Asks another agent; give it the whole task as the query.', query),
        call: guarded(async (args, signal) => {
          if (options.depth + 1 > maxToolDepth) {
            return {
              ok: false,
              content: `Agents calling agents stop at depth ${maxToolDepth}; answer without this tool.`,
            };
          }
          const result = await dependencies.agent(
            owner,
            String(entry.agent_id),
            requiredString(args, 'query'),
            { signal, depth: options.depth + 1, callerAccountId: options.callerAccountId },
          );
          return { ok: true, content: text(result) };
        }),
      };
    case 'pipeline':
      return {
        spec: spec('Runs a pipeline with these inputs and answers its output.', {
          type: 'object',
          properties: {
            inputs: {
              type: 'object',
              description: 'The pipeline’s inputs, by name.',
              additionalProperties: true,
            },
          },
          required: ['inputs'],
        }),
        call: guarded(async (args, signal) => {
          const inputs = args.inputs;
          if (inputs === null || typeof inputs !== 'object' || Array.isArray(inputs)) {
            return { ok: false, content: "'inputs' must be an object." };
          }
          const output = await dependencies.pipeline(
            owner.accountId,
            String(entry.pipeline_id),
            inputs as Record<string, unknown>,
            signal,
          );
          return { ok: true, content: text(output) };
        }),
      };
    default:
      throw new Error(`not a built-in tool type: ${String(entry.type)}`);
  }
}
