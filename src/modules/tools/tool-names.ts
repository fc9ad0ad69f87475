// Every tool's name by one rule, wherever the tool is offered: to a ToolAgent's model (its entries'
// names, an MCP server's or OpenAPI document's tools as `<entry>__<tool>`) and to a client of the
// platform's MCP server (an agent's or pipeline's own name). A name has only `[a-zA-Z0-9_-]` and at
// most 64 characters, which every model provider and MCP client takes; within one set of tools
// (one run's, one answer of /mcp) each name is unique, and a name already valid stays as it is.

/** The longest name every provider accepts. */
export const maxToolNameLength = 64;

const outside = /[^a-zA-Z0-9_-]+/g;

/**
 * `wanted` as a tool name: each run of characters outside `[a-zA-Z0-9_-]` becomes one `_`, a run
 * at either end is dropped, and the rest is cut to 64 characters; '' when nothing is left.
 */
export function toolNameOf(wanted: string): string {
  // A marker the pattern never leaves in place: runs at the ends go, the others become `_`.
  const marked = wanted.replace(outside, '\u0000');
  let start = 0;
  let end = marked.length;
  if (marked.startsWith('\u0000')) start = 1;
  if (end > start && marked.endsWith('\u0000')) end -= 1;
  return marked.slice(start, end).replaceAll('\u0000', '_').slice(0, maxToolNameLength);
}

/** `base` cut so that `suffix` fits after it within the length every provider accepts. */
function withSuffix(base: string, suffix: string): string {
  return `${base.slice(0, maxToolNameLength - suffix.length)}${suffix}`;
}

/**
 * The names of one set of tools, given out in order. A name already taken gets `_` and the end of
 * the later tool's id after it (an agent's or pipeline's: `Haiku_writer_3kT9sQ2a`), or its id
 * whole; a tool without an id (a server's, a document's) `_2`, `_3`… — so the earlier tool keeps
 * its name. A name with nothing valid in it is the id, or `tool`.
 */
export class ToolNames {
  private readonly taken: Set<string>;

  /** `reserved`: names no tool of the set may take (one offered beside them). */
  constructor(reserved: Iterable<string> = []) {
    this.taken = new Set(reserved);
  }

  /** A name for the tool that wants `wanted`, not yet taken; `id` distinguishes it on a clash. */
  take(wanted: string, id?: string): string {
    const base = toolNameOf(wanted);
    const byId = id === undefined ? '' : toolNameOf(id);
    const stem = base || byId || 'tool';
    const candidates = [
      base,
      base !== '' && byId !== '' ? withSuffix(base, `_${byId.slice(-8)}`) : '',
      byId,
      stem,
    ];
    let name = candidates.find((candidate) => candidate !== '' && !this.taken.has(candidate));
    for (let n = 2; name === undefined; n += 1) {
      const numbered = withSuffix(stem, `_${n}`);
      if (!this.taken.has(numbered)) name = numbered;
    }
    this.taken.add(name);
    return name;
  }
}
