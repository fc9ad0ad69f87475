// The output items of a streamed response as they are built: a message (its text and refusal
// parts) or a function call, and each as the Response lists it.

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

export interface MessageItem {
  readonly kind: 'message';
  readonly id: string;
  readonly outputIndex: number;
  text: string;
  refusal: string;
  /** Content indexes of the text and refusal parts, once opened. */
  textIndex: number | null;
  refusalIndex: number | null;
  parts: number;
  status: ItemStatus;
}

export interface CallItem {
  readonly kind: 'call';
  readonly id: string;
  readonly outputIndex: number;
  /** The tool call's index in the model's stream. */
  readonly index: number;
  callId: string;
  name: string;
  arguments: string;
  status: ItemStatus;
}

export type StreamItem = MessageItem | CallItem;

export function itemJson(item: StreamItem): Record<string, unknown> {
  if (item.kind === 'call') {
    return {
      id: item.id,
      type: 'function_call',
      status: item.status,
      arguments: item.arguments,
      call_id: item.callId,
      name: item.name,
    };
  }
  const content: Array<{ index: number; part: Record<string, unknown> }> = [];
  if (item.textIndex !== null) content.push({ index: item.textIndex, part: textPart(item.text) });
  if (item.refusalIndex !== null) {
    content.push({ index: item.refusalIndex, part: refusalPart(item.refusal) });
  }
  return {
    id: item.id,
    type: 'message',
    status: item.status,
    content: content.sort((a, b) => a.index - b.index).map(({ part }) => part),
    role: 'assistant',
  };
}

export function textPart(text: string) {
  return { type: 'output_text', annotations: [], logprobs: [], text };
}

export function refusalPart(refusal: string) {
  return { type: 'refusal', refusal };
}
