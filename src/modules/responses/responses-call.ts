// A Responses request as the chat turn it asks for, every field checked (each refusal a 400
// naming it): the conversation it continues or the chain it extends, its turns, its parameters
// and what its response repeats.
import { InvalidParameterError } from '../../errors/app-error.js';
import type {
  ChatParams,
  ChatTurn,
  FunctionTool,
  ResponseFormat,
  ToolChoice,
} from '../../models/spec.js';
import { assertSafeKeys } from '../../validation/safe-keys.js';
import { inputOf } from './responses-input.js';
import type { ResponseCall, ResponseEcho, ResponseRequestBody } from './responses-request.js';
import { echoedFormat, responseFormatOf, toolChoiceOf, toolsOf } from './responses-tools.js';

/** The conversation `conversation` names (a string or `{id}`), or null. */
function conversationIdOf(conversation: ResponseRequestBody['conversation']): string | null {
  if (conversation === undefined || conversation === null) return null;
  return typeof conversation === 'string' ? conversation : conversation.id;
}

/** What the request continues: a stored conversation, or a chain; and whether it is stored. */
interface References {
  readonly store: boolean;
  readonly previousResponseId: string | null;
  readonly conversationId: string | null;
}

/** The request's references, checked against each other; `prompt` and unsafe metadata refused. */
function referencesOf(body: ResponseRequestBody): References {
  const store = body.store !== false;
  const previousResponseId = body.previous_response_id ?? null;
  const named = conversationIdOf(body.conversation);
  if (named !== null && body.conversation_id !== undefined && body.conversation_id !== named) {
    throw new InvalidParameterError(
      'conversation_id',
      "'conversation_id' and 'conversation' name different conversations.",
    );
  }
  const conversationId = named ?? body.conversation_id ?? null;
  if (body.prompt !== undefined && body.prompt !== null) {
    throw new InvalidParameterError(
      'prompt',
      "'prompt' (a prompt stored in OpenAI's dashboard) is not supported; send 'instructions' and 'input'.",
    );
  }
  if (conversationId !== null && previousResponseId !== null) {
    throw new InvalidParameterError(
      'conversation',
      "'conversation' and 'previous_response_id' cannot be used together.",
    );
  }
  if (conversationId !== null && !store) {
    throw new InvalidParameterError(
      'store',
      "'store: false' cannot be used with 'conversation', which stores the turn in it.",
    );
  }
  if (body.metadata !== undefined && body.metadata !== null) {
    assertSafeKeys(body.metadata, 'metadata');
  }
  return { store, previousResponseId, conversationId };
}

/** The model's parameters: tools, tool_choice, `text.format` and the sampling fields. */
function paramsOf(
  body: ResponseRequestBody,
  tools: FunctionTool[],
  toolChoice: ToolChoice | undefined,
  responseFormat: ResponseFormat | undefined,
): ChatParams {
  const effort = body.reasoning?.effort ?? undefined;
  const verbosity = body.text?.verbosity ?? undefined;
  return {
    ...(tools.length === 0 ? {} : { tools }),
    ...(toolChoice === undefined ? {} : { tool_choice: toolChoice }),
    ...(body.parallel_tool_calls === undefined ||
    body.parallel_tool_calls === null ||
    tools.length === 0
      ? {}
      : { parallel_tool_calls: body.parallel_tool_calls }),
    ...(responseFormat === undefined ? {} : { response_format: responseFormat }),
    ...(body.top_p === undefined || body.top_p === null ? {} : { top_p: body.top_p }),
    ...(effort === undefined ? {} : { reasoning_effort: effort }),
    ...(verbosity === undefined ? {} : { verbosity }),
    ...(body.user === undefined ? {} : { user: body.user }),
  };
}

/** What the response repeats of its request. */
function echoOf(
  body: ResponseRequestBody,
  references: References,
  tools: readonly FunctionTool[],
): ResponseEcho {
  const verbosity = body.text?.verbosity ?? undefined;
  return {
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: references.previousResponseId,
    reasoning:
      body.reasoning === undefined || body.reasoning === null
        ? null
        : { effort: body.reasoning.effort ?? null, summary: body.reasoning.summary ?? null },
    store: references.store,
    temperature: body.temperature ?? null,
    text: {
      format: echoedFormat(body.text?.format),
      ...(verbosity === undefined ? {} : { verbosity }),
    },
    tool_choice: body.tool_choice ?? 'auto',
    tools: tools.map((tool) => ({
      type: 'function',
      name: tool.function.name,
      description: tool.function.description ?? null,
      parameters: tool.function.parameters ?? null,
      strict: tool.function.strict ?? null,
    })),
    top_p: body.top_p ?? null,
    ...(body.user === undefined ? {} : { user: body.user }),
    metadata: { ...(body.metadata ?? {}) },
  };
}

/**
 * The chat turn a request asks for, every field checked (each refusal a 400 naming it). Fields
 * of OpenAI's request that are not read here are ignored (docs: the Responses API).
 */
export function responseCallOf(body: ResponseRequestBody): ResponseCall {
  const references = referencesOf(body);
  const input = inputOf(body.input);
  const instructions = body.instructions ?? null;
  const withInstructions = instructions !== null && instructions !== '';
  const messages: ChatTurn[] = withInstructions
    ? [{ role: 'system', content: instructions }, ...input.turns]
    : input.turns;
  const paths = withInstructions ? ['instructions', ...input.paths] : input.paths;
  const tools = toolsOf(body.tools ?? []);
  const toolChoice = toolChoiceOf(body.tool_choice, tools);
  const responseFormat = responseFormatOf(body.text?.format);
  return {
    messages,
    paths,
    params: paramsOf(body, tools, toolChoice, responseFormat),
    inputItems: input.items,
    requestedModel: body.model,
    maxTokens: body.max_output_tokens ?? undefined,
    maxTokensParam: 'max_output_tokens',
    temperature: body.temperature ?? undefined,
    stream: body.stream === true,
    persist: references.store,
    previousResponseId: references.previousResponseId,
    conversationId: references.conversationId,
    userId: body.user_id ?? null,
    echo: echoOf(body, references, tools),
  };
}
