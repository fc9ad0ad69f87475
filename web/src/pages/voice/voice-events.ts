// The voice stream's server messages the page uses (the AsyncAPI document at /asyncapi.json), and how
// each changes the transcript.

export type VoiceEvent =
  | { type: 'speech_started'; turn_id: string }
  | { type: 'transcript'; turn_id: string; text: string; is_final: boolean }
  | { type: 'text_response'; turn_id: string; delta: string; final: false }
  | { type: 'text_response'; turn_id: string; text: string; final: true }
  | {
      type: 'audio_response';
      turn_id: string;
      audio: string;
      format: string;
      sample_rate: number;
    }
  | { type: 'interrupt'; turn_id: string; reason: string }
  | { type: 'turn_end'; turn_id: string; interrupted: boolean }
  | { type: 'ready' }
  | { type: 'error'; error: { code: string; message: string } };

export interface Line {
  who: 'you' | 'assistant';
  text: string;
  final: boolean;
}

/** A message of the socket as a VoiceEvent, or null when it is not JSON with a `type`. */
export function parseVoiceEvent(data: string): VoiceEvent | null {
  try {
    const message: unknown = JSON.parse(data);
    const isRecord = typeof message === 'object' && message !== null && !Array.isArray(message);
    return isRecord && typeof (message as { type?: unknown }).type === 'string'
      ? (message as VoiceEvent)
      : null;
  } catch {
    return null;
  }
}

export function base64ToBytes(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index += 1) bytes[index] = binary.charCodeAt(index);
  return bytes;
}

/** The live transcript replaces its open line of yours; an empty final transcript adds nothing. */
export function withTranscript(lines: Line[], text: string, final: boolean): Line[] {
  const last = lines[lines.length - 1];
  if (last !== undefined && last.who === 'you' && !last.final) {
    return [...lines.slice(0, -1), { who: 'you', text, final }];
  }
  return text === '' ? lines : [...lines, { who: 'you', text, final }];
}

/** Deltas add to the open answer; the final message carries the whole text. */
export function withAnswer(
  lines: Line[],
  message: Extract<VoiceEvent, { type: 'text_response' }>,
): Line[] {
  const last = lines[lines.length - 1];
  const open = last !== undefined && last.who === 'assistant' && !last.final;
  const text = message.final ? message.text : (open ? last.text : '') + message.delta;
  const line: Line = { who: 'assistant', text, final: message.final };
  return open ? [...lines.slice(0, -1), line] : [...lines, line];
}
