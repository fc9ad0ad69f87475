// What an agent's tools are, whatever serves them (an MCP server, an OpenAPI-described HTTP API, a
// built-in of the platform): a name, a description and a JSON Schema for the arguments the model
// proposes, and a call that answers text to feed back to the model.

/** One tool as the model sees it (OpenAI's function-tool shape, plus where it comes from). */
export interface ToolSpec {
  /** Unique within one agent's tools; `^[a-zA-Z0-9_-]{1,64}$` (what every provider accepts). */
  name: string;
  description: string;
  /** A JSON Schema of type `object` for the arguments. */
  parameters: Record<string, unknown>;
  /** The configuration entry it comes from (its `name`), for records and errors. */
  source: string;
  /** A person must approve each call before it runs. */
  requiresApproval: boolean;
  /**
   * Running a call twice does no harm (it only reads): a call its instance was stopped in runs
   * again by itself. Otherwise such a call is `interrupted` and waits for a person.
   */
  idempotent: boolean;
}

/** What a call answered: text for the model (bounded by the caller), and whether it failed. */
export interface ToolOutcome {
  /** False when the tool reported an error (MCP `isError`, HTTP 4xx/5xx): the model is told so. */
  ok: boolean;
  content: string;
}

/** The tools of one run: listed once, called many times; closed when the run ends or pauses. */
export interface ToolBox {
  readonly tools: readonly ToolSpec[];
  /**
   * Runs one call. Failures the model should hear about (the tool's own error, a timeout, an
   * unreachable server) resolve with `ok: false` and a message fit to show; only `signal`
   * aborting rejects.
   */
  call(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolOutcome>;
  close(): Promise<void>;
}

/** The run a ToolAgent opens its tools for. */
export interface ToolRun {
  /** The agent's owner: the tools are that account's (its knowledge bases, agents, pipelines). */
  readonly accountId: string;
  /** The account that asked for the run (a public agent's caller, not its owner). */
  readonly callerAccountId: string;
  /** The run's: aborting it stops what its tools are doing. */
  readonly signal: AbortSignal;
  /** How deep in agents calling agents as tools this run is (0: called by a client). */
  readonly depth: number;
}
