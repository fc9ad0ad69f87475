// Anthropic's prompt as the chat turns the service runs (OpenAI's message model,
// docs/message-model.md): the system prompt, user and assistant messages with their text, image,
// document, tool_use and tool_result blocks; what another provider's model cannot take is listed
// with its field, and what the prompt needs of its model gathered as it goes.
import { InvalidParameterError } from '../../errors/app-error.js';
import type { CapabilityNeed } from '../../models/capabilities.js';
import type { ChatTurn, ContentPart, ToolCall } from '../../models/spec.js';
import type {
  Json,
  PromptBody,
  RequestBlock,
  RequestMessage,
  Untranslatable,
} from './anthropic-request.js';

const dataUrl = (mediaType: unknown, data: unknown) =>
  `data:${typeof mediaType === 'string' ? mediaType : 'application/octet-stream'};base64,${typeof data === 'string' ? data : ''}`;

const sourceOf = (block: RequestBlock): Json =>
  typeof block.source === 'object' && block.source !== null ? (block.source as Json) : {};

/** The image block's source as an image_url part; undefined when it has none (a file id). */
function imagePart(block: RequestBlock): ContentPart | undefined {
  const source = sourceOf(block);
  if (source.type === 'base64' && typeof source.data === 'string') {
    return { type: 'image_url', image_url: { url: dataUrl(source.media_type, source.data) } };
  }
  if (source.type === 'url' && typeof source.url === 'string') {
    return { type: 'image_url', image_url: { url: source.url } };
  }
  return undefined;
}

/** A document block as a file part (base64) or text (a plain-text source). */
function documentPart(block: RequestBlock): ContentPart | undefined {
  const source = sourceOf(block);
  if (source.type === 'base64' && typeof source.data === 'string') {
    const filename = typeof block.title === 'string' ? { filename: block.title } : {};
    return {
      type: 'file',
      file: { file_data: dataUrl(source.media_type, source.data), ...filename },
    };
  }
  if (source.type === 'text' && typeof source.data === 'string') {
    return { type: 'text', text: source.data };
  }
  return undefined;
}

/** Collects what one request needs of its model, each capability once (its first field). */
export class Needs {
  private readonly byCapability = new Map<CapabilityNeed['capability'], CapabilityNeed>();
  add(need: CapabilityNeed): void {
    if (!this.byCapability.has(need.capability)) this.byCapability.set(need.capability, need);
  }
  list(): CapabilityNeed[] {
    return [...this.byCapability.values()];
  }
}

const toolsNeed = (param: string): CapabilityNeed => ({
  capability: 'tools',
  param,
  what: 'tool calls and results',
});
const visionNeed = (param: string): CapabilityNeed => ({
  capability: 'vision',
  param,
  what: 'image input',
});

/** The turns of one prompt, its translation's leftovers and needs gathered as it goes. */
export class PromptTranslation {
  readonly turns: ChatTurn[] = [];
  readonly untranslatable: Untranslatable[] = [];
  readonly needs = new Needs();

  skip(param: string, why: string): void {
    this.untranslatable.push({ param, why });
  }

  system(system: PromptBody['system']): void {
    if (system === undefined) return;
    const text =
      typeof system === 'string'
        ? system
        : system
            .map((block, index) => {
              if (block.type !== 'text' || typeof block.text !== 'string') {
                throw new InvalidParameterError(
                  `system[${index}].type`,
                  "The system prompt's blocks must be 'text' blocks.",
                );
              }
              return block.text;
            })
            .join('\n');
    if (text !== '') this.turns.push({ role: 'system', content: text });
  }

  message(message: RequestMessage, index: number): void {
    if (message.role !== 'user' && message.role !== 'assistant') {
      throw new InvalidParameterError(
        `messages[${index}].role`,
        `Role '${message.role}' is not a Messages API role; use user or assistant (the system prompt is 'system').`,
      );
    }
    if (typeof message.content === 'string') {
      this.turns.push({ role: message.role, content: message.content });
    } else if (message.role === 'assistant') {
      this.assistant(message.content, index);
    } else {
      this.user(message.content, index);
    }
  }

  /** Text and tool_use blocks: one assistant turn with its function calls. */
  private assistant(blocks: readonly RequestBlock[], index: number): void {
    const texts: string[] = [];
    const toolCalls: ToolCall[] = [];
    blocks.forEach((block, blockIndex) => {
      const param = `messages[${index}].content[${blockIndex}]`;
      switch (block.type) {
        case 'text':
          texts.push(block.text ?? '');
          break;
        case 'tool_use':
          this.needs.add(toolsNeed(`messages[${index}]`));
          toolCalls.push({
            id: block.id ?? '',
            type: 'function',
            function: { name: block.name ?? '', arguments: JSON.stringify(block.input ?? {}) },
          });
          break;
        case 'thinking':
        case 'redacted_thinking':
          // The model's own earlier reasoning, signed for Anthropic: nothing another model reads.
          break;
        default:
          this.skip(`${param}.type`, `a '${block.type}' block is Anthropic's own`);
      }
    });
    this.turns.push({
      role: 'assistant',
      content: texts.join('\n'),
      ...(toolCalls.length === 0 ? {} : { toolCalls }),
    });
  }

  /**
   * Tool results become tool turns (first, as Anthropic requires them to come); the message's
   * other content, and images returned by tools, one user turn after them.
   */
  private user(blocks: readonly RequestBlock[], index: number): void {
    const parts: ContentPart[] = [];
    let hasContent = false;
    blocks.forEach((block, blockIndex) => {
      const param = `messages[${index}].content[${blockIndex}]`;
      switch (block.type) {
        case 'tool_result':
          this.needs.add(toolsNeed(`messages[${index}]`));
          this.toolResult(block, param, parts);
          break;
        case 'tool_use':
          throw new InvalidParameterError(
            `${param}.type`,
            "A 'tool_use' block belongs in an assistant message.",
          );
        default:
          hasContent = true;
          this.contentBlock(block, param, parts);
      }
    });
    if (!hasContent && parts.length === 0) return;
    const text = parts
      .filter((part): part is Extract<ContentPart, { type: 'text' }> => part.type === 'text')
      .map((part) => part.text)
      .join('\n');
    const rich = parts.some((part) => part.type !== 'text');
    this.turns.push({ role: 'user', content: text, ...(rich ? { parts } : {}) });
  }

  /** A text, image or document block of a user message (or of a tool result). */
  private contentBlock(block: RequestBlock, param: string, parts: ContentPart[]): void {
    switch (block.type) {
      case 'text':
        parts.push({ type: 'text', text: block.text ?? '' });
        return;
      case 'image': {
        this.needs.add(visionNeed(param));
        const part = imagePart(block);
        if (part === undefined) {
          this.skip(`${param}.source.type`, 'only base64 and URL images are translated');
        } else parts.push(part);
        return;
      }
      case 'document': {
        const part = documentPart(block);
        if (part === undefined) {
          this.skip(`${param}.source.type`, 'only base64 and plain-text documents are translated');
        } else parts.push(part);
        return;
      }
      default:
        this.skip(`${param}.type`, `a '${block.type}' block is Anthropic's own`);
    }
  }

  private toolResult(block: RequestBlock, param: string, userParts: ContentPart[]): void {
    const texts: string[] = [];
    const content = block.content ?? '';
    if (typeof content === 'string') texts.push(content);
    else {
      content.forEach((inner, innerIndex) => {
        const innerParam = `${param}.content[${innerIndex}]`;
        if (inner.type === 'text') texts.push(inner.text ?? '');
        else if (inner.type === 'image') {
          // A tool turn holds text only: the images a tool returned follow as the user's.
          this.contentBlock(inner, innerParam, userParts);
        } else this.skip(`${innerParam}.type`, `a '${inner.type}' block in a tool result`);
      });
    }
    const text = texts.join('\n');
    this.turns.push({
      role: 'tool',
      content: block.is_error === true ? `Error: ${text}` : text,
      toolCallId: block.tool_use_id ?? '',
    });
  }
}
