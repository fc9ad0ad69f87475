// What the platform reads of an MCP server's messages: a tool's bounded entry in a list, a call's
// result as text for the model, and the reduction of a large answer in the text worker threads.
// A large answer (a JSON body or one event of an event stream) is parsed there and written again
// small — a call's result as the one text the model will read, cut to the tool's result limit; a
// tool list bounded as the session bounds it — so the SDK on the event loop only parses a small
// body. Nothing here imports the SDK: the worker loads this file.
import { brief, cutTextWithin } from './cut-text.js';

/** Tools read from one server at most; further pages are not asked for. */
export const maxMcpTools = 200;
export const maxDescriptionChars = 2000;
/** A tool's argument schema larger than this (as JSON) is replaced by a permissive one. */
const maxSchemaChars = 64 * 1024;
/** A call's content items read at most; the rest are counted for the model. */
export const maxContentItems = 1000;
/** A member of another answer (initialize's, say) larger than this (as JSON) is left out. */
const maxOtherMemberChars = 16 * 1024;
const maxErrorMessageChars = 2000;
const maxEventIdChars = 1024;

/** A tool's argument schema as kept: a copy, always `type: 'object'`, permissive when too large. */
export function boundedSchema(schema: unknown): Record<string, unknown> {
  const permissive = { type: 'object', additionalProperties: true };
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return permissive;
  const text = JSON.stringify(schema);
  if (text.length > maxSchemaChars) return permissive;
  // A copy: the SDK's object is not ours to keep (and `type` must be `object` for every provider).
  return { ...(JSON.parse(text) as Record<string, unknown>), type: 'object' };
}

/** A remote's value as text: strings as they are, anything else as JSON. */
function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  return value === undefined ? '' : JSON.stringify(value);
}

interface ContentItem {
  type: string;
  text?: unknown;
  mimeType?: unknown;
  uri?: unknown;
  resource?: { uri?: unknown; text?: unknown; mimeType?: unknown };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** One content item as text: its text, or what it is (an image, a resource…). */
function itemText(item: ContentItem): { text: string; isText: boolean } {
  const mime = typeof item.mimeType === 'string' ? ` ${item.mimeType}` : '';
  switch (item.type) {
    case 'text':
      return { text: textOf(item.text), isText: true };
    case 'image':
    case 'audio':
      return { text: `[${item.type}${mime}]`, isText: false };
    case 'resource': {
      const resource = isObject(item.resource) ? item.resource : {};
      if (typeof resource.text === 'string') return { text: resource.text, isText: true };
      const resourceMime = typeof resource.mimeType === 'string' ? ` ${resource.mimeType}` : '';
      return {
        text: `[resource ${brief(textOf(resource.uri), 200)}${resourceMime}]`,
        isText: false,
      };
    }
    case 'resource_link':
      return { text: `[resource link ${brief(textOf(item.uri), 200)}]`, isText: false };
    default:
      return { text: `[${brief(String(item.type), 40)} content]`, isText: false };
  }
}

/** The text of a call's result for the model (at most `maxContentItems` items read). */
export function mcpResultText(result: {
  content?: unknown;
  structuredContent?: unknown;
  toolResult?: unknown;
}): string {
  const parts: string[] = [];
  let texts = 0;
  const content = Array.isArray(result.content) ? (result.content as unknown[]) : [];
  for (const item of content.slice(0, maxContentItems)) {
    if (!isObject(item)) continue;
    const read = itemText(item as unknown as ContentItem);
    parts.push(read.text);
    if (read.isText) texts += 1;
  }
  if (content.length > maxContentItems) {
    parts.push(`[… ${content.length - maxContentItems} more content items]`);
  }
  if (texts === 0 && result.structuredContent !== undefined) {
    parts.unshift(JSON.stringify(result.structuredContent));
  } else if (content.length === 0 && result.toolResult !== undefined) {
    // The protocol's first version answered `toolResult`.
    parts.push(JSON.stringify(result.toolResult));
  }
  return parts.join('\n');
}

// ---- Reduction in the text worker threads ------------------------------------------------------

/** A large answer to reduce: a JSON body (one message or a batch), or one event of a stream. */
export interface McpAnswerTask {
  /** The answer's bytes, in order. */
  parts: Uint8Array[];
  kind: 'json' | 'event';
  /** The tool's result limit (`tools.max_result_chars`): a call's text is cut to it. */
  maxResultChars: number;
}

/** The answer written again small ('' for an event left out), or why it could not be read. */
export type McpAnswerReduced = { ok: true; text: string } | { ok: false; problem: string };

/** A tool of a list as the session keeps it; null when it has no name (the SDK would refuse). */
function boundedTool(tool: unknown): Record<string, unknown> | null {
  if (!isObject(tool) || typeof tool.name !== 'string') return null;
  const description = typeof tool.description === 'string' ? tool.description : undefined;
  const title = typeof tool.title === 'string' ? tool.title : undefined;
  return {
    name: tool.name,
    ...(description === undefined ? {} : { description: brief(description, maxDescriptionChars) }),
    ...(title === undefined ? {} : { title: brief(title, maxDescriptionChars) }),
    inputSchema: boundedSchema(tool.inputSchema),
  };
}

/** A result's members, those small enough kept (an answer the platform reads little of). */
function smallMembers(result: Record<string, unknown>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(result)) {
    if (JSON.stringify(value ?? null).length <= maxOtherMemberChars) kept[key] = value;
  }
  return kept;
}

function reducedResult(result: Record<string, unknown>, maxResultChars: number): unknown {
  if (
    Array.isArray(result.content) ||
    result.structuredContent !== undefined ||
    result.toolResult !== undefined
  ) {
    // A call's result: the one text the model reads, as the session would make it, already cut.
    const text = cutTextWithin(mcpResultText(result), maxResultChars);
    return {
      content: [{ type: 'text', text }],
      ...(result.isError === true ? { isError: true } : {}),
    };
  }
  if (Array.isArray(result.tools)) {
    const tools = result.tools
      .slice(0, maxMcpTools)
      .map(boundedTool)
      .filter((tool) => tool !== null);
    const cursor = result.nextCursor;
    return {
      tools,
      ...(typeof cursor === 'string' && cursor.length <= maxEventIdChars
        ? { nextCursor: cursor }
        : {}),
    };
  }
  return smallMembers(result);
}

/** One JSON-RPC message reduced; undefined when it is left out (a server's large request). */
function reducedMessage(message: unknown, maxResultChars: number): unknown {
  if (!isObject(message) || 'method' in message) return undefined;
  const head = { jsonrpc: '2.0', id: message.id };
  if (isObject(message.error)) {
    const { code, message: text } = message.error;
    return {
      ...head,
      error: {
        code: typeof code === 'number' && Number.isInteger(code) ? code : -32603,
        message: brief(typeof text === 'string' ? text : '', maxErrorMessageChars),
      },
    };
  }
  if (isObject(message.result)) {
    return { ...head, result: reducedResult(message.result, maxResultChars) };
  }
  return undefined;
}

/** A JSON body's message or batch, reduced. */
function reducedJson(text: string, maxResultChars: number): string {
  const parsed: unknown = JSON.parse(text);
  if (Array.isArray(parsed)) {
    return JSON.stringify(
      parsed
        .map((message) => reducedMessage(message, maxResultChars))
        .filter((message) => message !== undefined),
    );
  }
  const reduced = reducedMessage(parsed, maxResultChars);
  return JSON.stringify(reduced === undefined ? [] : reduced);
}

/** One event of an event stream (its field lines), reduced; '' when it is left out. */
function reducedEvent(text: string, maxResultChars: number): string {
  let event = '';
  let id: string | undefined;
  const data: string[] = [];
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
    else if (field === 'id' && value.length <= maxEventIdChars) id = value;
  }
  // Only `message` events carry JSON-RPC messages; a large event of another kind is left out.
  if (data.length === 0 || (event !== '' && event !== 'message')) return '';
  const reduced = reducedJson(data.join('\n'), maxResultChars);
  if (reduced === '[]') return '';
  return `event: message\n${id === undefined ? '' : `id: ${id}\n`}data: ${reduced}\n\n`;
}

/** The worker's task: a large answer parsed and written again small. */
export function reduceMcpAnswer(task: McpAnswerTask): McpAnswerReduced {
  const text = new TextDecoder().decode(Buffer.concat(task.parts));
  try {
    return {
      ok: true,
      text:
        task.kind === 'json'
          ? reducedJson(text, task.maxResultChars)
          : reducedEvent(text, task.maxResultChars),
    };
  } catch (error) {
    if (error instanceof SyntaxError) return { ok: false, problem: 'it is not valid JSON' };
    // Written again, JSON nested thousands of levels deep runs out of stack.
    if (error instanceof RangeError) return { ok: false, problem: 'it is nested too deeply' };
    throw error;
  }
}
