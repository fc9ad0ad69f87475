// What a chat request needs of its model beyond text (tools, vision, JSON schemas, audio input),
// and the 400 that names the parameter and the model when the model lacks it — raised before any
// upstream call, and used to keep fallbacks and `model: "auto"` to models that can serve it.
import type { ChatCapability, ModelDefinition } from '../config/config.js';
import { InvalidParameterError } from '../errors/app-error.js';
import type { ChatParams, ChatTurn } from './spec.js';

export interface CapabilityNeed {
  readonly capability: ChatCapability;
  /** The request field that asks for it (`tools`, `messages[2].content[1]`, `response_format`). */
  readonly param: string;
  /** What it is, for the message: "tool calling", "image input"… */
  readonly what: string;
}

const partNeeds = {
  image_url: { capability: 'vision', what: 'image input' },
  input_audio: { capability: 'audio_input', what: 'audio input' },
} as const;

/** Each capability the request needs once, with the first field that asks for it. */
export function capabilityNeeds(
  messages: readonly ChatTurn[],
  params: ChatParams | undefined,
): CapabilityNeed[] {
  const needs = new Map<ChatCapability, CapabilityNeed>();
  const add = (need: CapabilityNeed) => {
    if (!needs.has(need.capability)) needs.set(need.capability, need);
  };
  if (params?.tools !== undefined && params.tools.length > 0 && params.tool_choice !== 'none') {
    add({ capability: 'tools', param: 'tools', what: 'tool calling' });
  }
  if (params?.response_format?.type === 'json_schema') {
    add({ capability: 'json_schema', param: 'response_format', what: 'JSON-schema output' });
  }
  messages.forEach((turn, index) => {
    if (turn.role === 'tool' || (turn.toolCalls?.length ?? 0) > 0) {
      add({
        capability: 'tools',
        param: `messages[${index}]`,
        what: 'tool calls and results',
      });
    }
    turn.parts?.forEach((part, partIndex) => {
      if (part.type === 'image_url' || part.type === 'input_audio') {
        add({ ...partNeeds[part.type], param: `messages[${index}].content[${partIndex}]` });
      }
    });
  });
  return [...needs.values()];
}

/** The first need the model does not meet, or undefined when it meets them all. */
export function unmetNeed(
  definition: ModelDefinition,
  needs: readonly CapabilityNeed[],
): CapabilityNeed | undefined {
  return needs.find((need) => !definition.capabilities.includes(need.capability));
}

export function canServe(definition: ModelDefinition, needs: readonly CapabilityNeed[]): boolean {
  return unmetNeed(definition, needs) === undefined;
}

/** 400 when the model lacks a capability the request needs. */
export function requireCapabilities(
  definition: ModelDefinition,
  needs: readonly CapabilityNeed[],
): void {
  const need = unmetNeed(definition, needs);
  if (need === undefined) return;
  throw new InvalidParameterError(
    need.param,
    `Model '${definition.name}' does not support ${need.what} (its capabilities: ${definition.capabilities.join(', ') || 'none'}). Use a model with '${need.capability}', or list it in the model's 'capabilities' in the config if the model has it.`,
  );
}
