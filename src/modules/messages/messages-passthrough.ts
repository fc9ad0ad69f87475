// The answer of a model of the `anthropic` provider, passed through: the request as sent (only
// `model` and `max_tokens` rewritten, Anthropic's version headers forwarded), the answer and its
// events under the platform's id and the catalog's model name.
import { AppError } from '../../errors/app-error.js';
import { newId } from '../../ids.js';
import type {
  AnthropicPassthrough,
  PassthroughEvent,
} from '../../models/providers/anthropic-passthrough.js';
import { RequestAbortedError, UpstreamError, type CallAttribution } from '../../models/spec.js';
import type { DirectAnswer } from '../chat/turn-dialect.js';
import { anthropicErrorBody } from './anthropic-errors.js';
import type { MessageEvent } from './anthropic-events.js';
import type { Json, MessagesRequestBody } from './anthropic-request.js';

/** A passed-through answer under the platform's id and the catalog's model name. */
export function passedThroughMessage(message: Json, id: string, model: string): Json {
  return { ...message, id, model };
}

/** A passed-through event: message_start carries the platform's id and model; others as sent. */
export function passedThroughEvent(
  passed: PassthroughEvent,
  id: string,
  model: string,
): MessageEvent {
  const { data } = passed;
  if (data.type === 'message_start' && typeof data.message === 'object' && data.message !== null) {
    return {
      event: passed.event,
      data: { ...data, message: { ...(data.message as Json), id, model } },
    };
  }
  return passed;
}

/** Anthropic's request headers the pass-through forwards, checked (they become upstream headers). */
export function forwardedHeaders(headers: Readonly<Record<string, unknown>>): {
  version: string | undefined;
  beta: string | undefined;
} {
  const read = (name: string, pattern: RegExp): string | undefined => {
    const value = headers[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || !pattern.test(value)) {
      throw new AppError('invalid_parameter', `The '${name}' header is not a valid value.`, {
        param: name,
      });
    }
    return value;
  };
  return {
    version: read('anthropic-version', /^[A-Za-z0-9._-]{1,64}$/),
    beta: read('anthropic-beta', /^[A-Za-z0-9._, -]{1,1024}$/),
  };
}

/** A passed-through answer's events under the platform's id and model; a failure ends them. */
async function* passedThroughEvents(
  events: AsyncIterable<PassthroughEvent>,
  id: string,
  model: string,
  requestId: string,
  failed: (error: AppError) => void,
): AsyncGenerator<MessageEvent> {
  try {
    for await (const event of events) yield passedThroughEvent(event, id, model);
  } catch (error) {
    if (error instanceof RequestAbortedError) return;
    const failure =
      error instanceof AppError
        ? error
        : new UpstreamError('upstream_error', 'The answer could not be completed.', {
            cause: error,
          });
    failed(failure);
    yield { event: 'error', data: anthropicErrorBody(failure, requestId) };
  }
}

/** What a pass-through sends: the body as the client sent it, under the model's capped limit. */
export interface PassedThrough {
  readonly body: MessagesRequestBody;
  readonly model: string;
  readonly maxTokens: number;
  readonly headers: Readonly<Record<string, unknown>>;
  readonly requestId: string;
  readonly attribution: CallAttribution;
  readonly countInput: () => Promise<number>;
}

/** The turn answered by the model's pass-through client, whole or as Anthropic's events. */
export function passthroughAnswer(
  client: AnthropicPassthrough,
  passed: PassedThrough,
): DirectAnswer {
  const { version, beta } = forwardedHeaders(passed.headers);
  const id = newId('msg');
  const call = (signal: AbortSignal) => ({
    body: passed.body,
    maxTokens: passed.maxTokens,
    version,
    beta,
    signal,
    attribution: passed.attribution,
    countInput: passed.countInput,
  });
  return {
    async complete(signal) {
      const { message } = await client.create(call(signal));
      return { body: JSON.stringify(passedThroughMessage(message, id, passed.model)) };
    },
    async openStream(signal, failed) {
      const events = await client.openStream(call(signal));
      return passedThroughEvents(events, id, passed.model, passed.requestId, failed);
    },
    errorEvent: (error) => ({ event: 'error', data: anthropicErrorBody(error, passed.requestId) }),
  };
}
