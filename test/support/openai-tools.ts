// What the suites that send tools through the OpenAI API share: two function tools, a 1×1 PNG,
// and reading a chunk stream back (collected, tool-call deltas put together by index as a
// client does).
import type {
  ChatCompletionChunk,
  ChatCompletionFunctionTool,
} from 'openai/resources/chat/completions';

export const weatherTool: ChatCompletionFunctionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather in a city.',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    },
    strict: true,
  },
};

export const timeTool: ChatCompletionFunctionTool = {
  type: 'function',
  function: {
    name: 'get_time',
    parameters: { type: 'object', properties: { zone: { type: 'string' } }, required: ['zone'] },
  },
};

/** A 1×1 PNG, base64. */
export const pixelBase64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
export const pixelDataUrl = `data:image/png;base64,${pixelBase64}`;

export async function collectChunks(
  stream: AsyncIterable<ChatCompletionChunk>,
): Promise<ChatCompletionChunk[]> {
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

/** The tool calls of a chunk sequence, put together by index as a client does. */
export function assembledToolCalls(chunks: readonly ChatCompletionChunk[]) {
  const calls = new Map<number, { id: string; name: string; arguments: string }>();
  for (const chunk of chunks) {
    for (const delta of chunk.choices[0]?.delta.tool_calls ?? []) {
      const call = calls.get(delta.index) ?? { id: '', name: '', arguments: '' };
      call.id ||= delta.id ?? '';
      call.name ||= delta.function?.name ?? '';
      call.arguments += delta.function?.arguments ?? '';
      calls.set(delta.index, call);
    }
  }
  return [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
}
