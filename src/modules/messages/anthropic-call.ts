// A Messages (or count_tokens) request as the chat turn it asks for: the prompt's turns, tools and
// output settings as the model's parameters, what a model of another provider cannot take (refused
// with a 400 naming it when the request is translated), and what the turn needs of its model.
import { InvalidParameterError } from '../../errors/app-error.js';
import type { ChatParams, ChatTurn } from '../../models/spec.js';
import { PromptTranslation } from './anthropic-prompt.js';
import type {
  MessagesCall,
  MessagesRequestBody,
  OutputConfig,
  PromptBody,
  TranslatedPrompt,
  Untranslatable,
} from './anthropic-request.js';
import { functionTools, toolChoiceOf } from './anthropic-tools.js';

/** Top-level fields only Anthropic's own API can act on (a refusal when translated). */
const anthropicOnly: Readonly<Record<string, string>> = {
  top_k: 'OpenAI-compatible models take no top_k here',
  mcp_servers: "MCP servers are run by Anthropic's API",
  container: "code-execution containers are Anthropic's",
};

const untranslatableError = (modelName: string, item: Untranslatable) =>
  new InvalidParameterError(
    item.param,
    `Model '${modelName}' is not an Anthropic model, and '${item.param}' cannot be translated for it: ${item.why}. It is passed through only to models of the 'anthropic' provider.`,
  );

/** 400 for the first part of the request a translated call would drop. */
export function refuseUntranslatable(call: TranslatedPrompt, modelName: string): void {
  const first = call.untranslatable[0];
  if (first !== undefined) throw untranslatableError(modelName, first);
}

/** `output_config`: its JSON schema as OpenAI's response_format, its effort as reasoning_effort. */
function outputParams(
  config: OutputConfig | undefined,
): Pick<ChatParams, 'response_format' | 'reasoning_effort'> {
  if (config === undefined) return {};
  const { format, effort } = config;
  const effortParam = effort === undefined || effort === null ? {} : { reasoning_effort: effort };
  if (format === undefined || format === null) return effortParam;
  if (format.type !== 'json_schema' || format.schema === undefined) {
    throw new InvalidParameterError(
      'output_config.format',
      "output_config.format must be { type: 'json_schema', schema: {…} }.",
    );
  }
  return {
    ...effortParam,
    response_format: {
      type: 'json_schema',
      json_schema: { name: 'output', schema: format.schema, strict: true },
    },
  };
}

/** The prompt of a Messages (or count_tokens) request as turns and parameters. */
export function translatePrompt(body: PromptBody): TranslatedPrompt {
  const translation = new PromptTranslation();
  translation.system(body.system);
  body.messages.forEach((message, index) => translation.message(message, index));
  const last = body.messages[body.messages.length - 1];
  if (last?.role === 'assistant') {
    translation.skip(
      `messages[${body.messages.length - 1}].role`,
      "a last assistant message (a prefill of the answer) is Anthropic's",
    );
  }
  const tools = functionTools(body.tools ?? [], translation);
  const names = (body.tools ?? []).map((tool) => tool.name);
  const choice = toolChoiceOf(body.tool_choice, tools, names);
  if (tools.length > 0 && choice.tool_choice !== 'none') {
    translation.needs.add({ capability: 'tools', param: 'tools', what: 'tool calling' });
  }
  // Adaptive thinking leaves it to the model: one that does not think just answers.
  const thinking = body.thinking?.type;
  if (thinking !== undefined && thinking !== 'disabled' && thinking !== 'adaptive') {
    translation.skip('thinking.type', `extended thinking ('${thinking}') is Anthropic's`);
  }
  const output = outputParams(body.output_config);
  if (output.response_format !== undefined) {
    translation.needs.add({
      capability: 'json_schema',
      param: 'output_config.format',
      what: 'JSON-schema output',
    });
  }
  for (const [field, why] of Object.entries(anthropicOnly)) {
    if (body[field] !== undefined && body[field] !== null) translation.skip(field, why);
  }
  return {
    messages: translation.turns,
    params: {
      ...(tools.length === 0 ? {} : { tools }),
      ...choice,
      ...output,
    },
    untranslatable: translation.untranslatable,
    // Tools, then what the turns ask for in their order: the first field asking is named.
    needs: [
      ...translation.needs.list().filter((need) => need.param === 'tools'),
      ...translation.needs.list().filter((need) => need.param !== 'tools'),
    ],
  };
}

/** The chat turn a Messages request asks for. */
export function messagesCallOf(body: MessagesRequestBody): MessagesCall {
  const prompt = translatePrompt(body);
  const stop = body.stop_sequences ?? [];
  const userId = body.metadata?.user_id;
  const params: ChatParams = {
    ...prompt.params,
    ...(stop.length === 0 ? {} : { stop }),
    ...(body.top_p === undefined ? {} : { top_p: body.top_p }),
    ...(typeof userId === 'string' ? { user: userId } : {}),
  };
  return {
    ...prompt,
    params,
    persist: body.user_id !== undefined || body.conversation_id !== undefined,
    userId: body.user_id ?? null,
    conversationId: body.conversation_id ?? null,
    requestedModel: body.model,
    maxTokens: body.max_tokens,
    temperature: body.temperature,
    stream: body.stream === true,
  };
}

/** The tokens a count_tokens request counts: its turns, and its tools as text. */
export function countedTurns(prompt: TranslatedPrompt): ChatTurn[] {
  const tools = prompt.params.tools ?? [];
  return tools.length === 0
    ? prompt.messages
    : [...prompt.messages, { role: 'system', content: JSON.stringify(tools) }];
}
