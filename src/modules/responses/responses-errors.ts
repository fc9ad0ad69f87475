// The chat service's errors in a Responses client's names: the service names the fields of its
// own request, the client sent other ones.
import { AppError } from '../../errors/app-error.js';

/**
 * The chat service names the fields of its own request (`messages[3].content[1]`,
 * `response_format`, `tool_choice.function.name`); a Responses client sent other ones. An error
 * naming one is given the client's name for it (in `param` and in the message), by `paths`, the
 * field each turn was read from. Other errors are returned as they are.
 */
export function withClientParams(error: unknown, paths: readonly string[]): unknown {
  if (!(error instanceof AppError) || error.param === null) return error;
  const renamed = clientParam(error.param, paths);
  if (renamed === error.param) return error;
  return new AppError(error.code, error.message.split(error.param).join(renamed), {
    param: renamed,
    details: error.details,
    headers: error.headers,
    cause: error.cause,
  });
}

function clientParam(param: string, paths: readonly string[]): string {
  const turn = /^messages\[(\d+)\](.*)$/.exec(param);
  if (turn !== null) {
    const rest = turn[2]!
      .replace(/^(\.content\[\d+\])\.image_url\.url$/, '$1.image_url')
      .replace(/^\.tool_call_id$/, '.call_id');
    return `${paths[Number(turn[1])] ?? 'input'}${rest}`;
  }
  if (param === 'messages') return 'input';
  if (param.startsWith('response_format')) return 'text.format';
  if (param === 'reasoning_effort') return 'reasoning.effort';
  if (param === 'tool_choice.function.name') return 'tool_choice.name';
  const tool = /^(tools\[\d+\])\.function\.(.*)$/.exec(param);
  if (tool !== null) return `${tool[1]!}.${tool[2]!}`;
  return param;
}
