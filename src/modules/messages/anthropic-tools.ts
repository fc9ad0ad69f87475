// Anthropic's tools and tool_choice as OpenAI's function tools and tool_choice; Anthropic's server
// tools (which only its API runs) are listed as untranslatable.
import { InvalidParameterError } from '../../errors/app-error.js';
import type { FunctionTool, ToolChoice } from '../../models/spec.js';
import type { PromptTranslation } from './anthropic-prompt.js';
import type { RequestTool, RequestToolChoice } from './anthropic-request.js';

/** The request's custom tools as function tools; a server tool is noted untranslatable. */
export function functionTools(
  tools: readonly RequestTool[],
  translation: PromptTranslation,
): FunctionTool[] {
  const functions: FunctionTool[] = [];
  tools.forEach((tool, index) => {
    if (tool.type !== undefined && tool.type !== 'custom') {
      translation.skip(`tools[${index}].type`, `'${tool.type}' is a tool Anthropic's API runs`);
      return;
    }
    if (tool.input_schema === undefined) {
      throw new InvalidParameterError(
        `tools[${index}].input_schema`,
        `Tool '${tool.name}' needs an 'input_schema' (the JSON Schema of its input).`,
      );
    }
    functions.push({
      type: 'function',
      function: {
        name: tool.name,
        ...(tool.description === undefined ? {} : { description: tool.description }),
        parameters: tool.input_schema,
      },
    });
  });
  return functions;
}

/** `tool_choice` in OpenAI's shape, with `disable_parallel_tool_use` as parallel_tool_calls. */
export function toolChoiceOf(
  choice: RequestToolChoice | undefined,
  tools: readonly FunctionTool[],
  /** Every tool's name, Anthropic's server tools included. */
  names: readonly string[],
): { tool_choice?: ToolChoice; parallel_tool_calls?: boolean } {
  if (choice === undefined) return {};
  const parallel = choice.disable_parallel_tool_use === true ? { parallel_tool_calls: false } : {};
  switch (choice.type) {
    case 'auto':
    case 'none':
      // OpenAI refuses a tool_choice without tools; Anthropic takes it as meaning nothing.
      return tools.length === 0 ? {} : { tool_choice: choice.type, ...parallel };
    case 'any':
      if (names.length === 0) {
        throw new InvalidParameterError(
          'tool_choice.type',
          "tool_choice 'any' needs at least one tool in 'tools'.",
        );
      }
      return { tool_choice: 'required', ...parallel };
    case 'tool': {
      const name = choice.name ?? '';
      if (!names.includes(name)) {
        throw new InvalidParameterError(
          'tool_choice.name',
          `tool_choice names the tool '${name}', which is not among the request's tools.`,
        );
      }
      return { tool_choice: { type: 'function', function: { name } }, ...parallel };
    }
    default:
      throw new InvalidParameterError(
        'tool_choice.type',
        `tool_choice '${choice.type}' is not one of auto, any, tool, none.`,
      );
  }
}
