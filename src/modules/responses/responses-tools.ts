// Function tools, tool_choice and `text.format` as Chat Completions' parameters (OpenAI's built-in
// tools refused by name), and `text.format` as a response repeats it.
import { InvalidParameterError, MissingParameterError } from '../../errors/app-error.js';
import { maxSchemaText } from '../../models/openai-messages.js';
import type { FunctionTool, ResponseFormat, ToolChoice } from '../../models/spec.js';
import {
  functionName,
  requiredText,
  type TextFormatBody,
  type ToolBody,
  type ToolChoiceBody,
} from './responses-request.js';

function checkSchemaSize(schema: unknown, param: string): void {
  if (schema !== undefined && schema !== null && JSON.stringify(schema).length > maxSchemaText) {
    throw new InvalidParameterError(
      param,
      `'${param}' is longer than ${maxSchemaText} characters as JSON text.`,
    );
  }
}

/** Function tools as the model interface takes them; any other tool type is a 400 naming it. */
export function toolsOf(tools: readonly ToolBody[]): FunctionTool[] {
  return tools.map((tool, index) => {
    const at = `tools[${index}]`;
    if (tool.type !== 'function') {
      throw new InvalidParameterError(
        `${at}.type`,
        `Tool type '${tool.type}' is one OpenAI runs on its own servers; this platform cannot run it. Only 'function' tools are supported (your code runs them).`,
      );
    }
    const name = requiredText(tool.name, `${at}.name`);
    if (!functionName.test(name)) {
      throw new InvalidParameterError(
        `${at}.name`,
        `'${at}.name' must be 1 to 64 letters, digits, '_' or '-'.`,
      );
    }
    checkSchemaSize(tool.parameters, `${at}.parameters`);
    return {
      type: 'function',
      function: {
        name,
        ...(tool.description === undefined || tool.description === null
          ? {}
          : { description: tool.description }),
        ...(tool.parameters === undefined || tool.parameters === null
          ? {}
          : { parameters: tool.parameters }),
        ...(tool.strict === undefined || tool.strict === null ? {} : { strict: tool.strict }),
      },
    };
  });
}

/** `tool_choice` in Chat Completions' shape; undefined when there is nothing to choose from. */
export function toolChoiceOf(
  choice: ToolChoiceBody | undefined,
  tools: readonly FunctionTool[],
): ToolChoice | undefined {
  if (choice === undefined) return undefined;
  if (typeof choice === 'string') {
    if (tools.length > 0) return choice;
    if (choice === 'required') {
      throw new InvalidParameterError('tool_choice', "'tool_choice' needs 'tools' to choose from.");
    }
    // `auto` and `none` without tools change nothing (Chat Completions upstreams refuse them).
    return undefined;
  }
  if (choice.type !== 'function') {
    throw new InvalidParameterError(
      'tool_choice.type',
      `'tool_choice' of type '${choice.type}' is not supported; use "auto", "none", "required" or {"type": "function", "name": …}.`,
    );
  }
  const name = requiredText(choice.name, 'tool_choice.name');
  if (!tools.some((tool) => tool.function.name === name)) {
    throw new InvalidParameterError(
      'tool_choice.name',
      `'tool_choice' names the function '${name}', which is not one of 'tools'.`,
    );
  }
  return { type: 'function', function: { name } };
}

/** `text.format` as Chat Completions' `response_format` (none for plain text, the default). */
export function responseFormatOf(
  format: TextFormatBody | null | undefined,
): ResponseFormat | undefined {
  if (format === undefined || format === null || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type !== 'json_schema') {
    throw new InvalidParameterError(
      'text.format.type',
      `'text.format.type' must be text, json_object or json_schema, not '${format.type}'.`,
    );
  }
  const name = requiredText(format.name, 'text.format.name');
  if (!functionName.test(name)) {
    throw new InvalidParameterError(
      'text.format.name',
      "'text.format.name' must be 1 to 64 letters, digits, '_' or '-'.",
    );
  }
  if (format.schema === undefined) throw new MissingParameterError('text.format.schema');
  checkSchemaSize(format.schema, 'text.format.schema');
  return {
    type: 'json_schema',
    json_schema: {
      name,
      schema: format.schema,
      ...(format.description === undefined ? {} : { description: format.description }),
      ...(format.strict === undefined || format.strict === null ? {} : { strict: format.strict }),
    },
  };
}

/** `text.format` as a response repeats it. */
export function echoedFormat(format: TextFormatBody | null | undefined): Record<string, unknown> {
  if (format === undefined || format === null || format.type === 'text') return { type: 'text' };
  if (format.type === 'json_object') return { type: 'json_object' };
  return {
    type: 'json_schema',
    name: format.name,
    schema: format.schema,
    ...(format.description === undefined ? {} : { description: format.description }),
    strict: format.strict ?? null,
  };
}
