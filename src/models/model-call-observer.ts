// Every call to a chat or embedding model the registry hands out is reported to an observer
// (the service's metrics): which catalog model, how long, how it ended, and the tokens it metered.
// The wrappers add one timestamp and one callback per call, nothing per streamed part.
import type { ModelType } from '../config/config.js';
import {
  RequestAbortedError,
  UpstreamError,
  type ChatModel,
  type EmbeddingModel,
  type GenerationRequest,
  type StreamPart,
  type TokenUsage,
} from './spec.js';

export interface ModelCallRecord {
  /** The catalog name. */
  readonly model: string;
  readonly kind: Extract<ModelType, 'chat' | 'embedding'>;
  readonly seconds: number;
  /** `aborted`: the client left (or stopped reading a stream) before the model finished. */
  readonly outcome: 'ok' | 'error' | 'aborted';
  /** The error's code (`upstream_timeout`, …) when the outcome is `error`. */
  readonly errorCode?: string;
  readonly usage?: TokenUsage;
}

export interface ModelCallObserver {
  modelCall(record: ModelCallRecord): void;
}

function failure(error: unknown): Pick<ModelCallRecord, 'outcome' | 'errorCode'> {
  if (error instanceof RequestAbortedError) return { outcome: 'aborted' };
  return {
    outcome: 'error',
    errorCode: error instanceof UpstreamError ? error.code : 'internal_error',
  };
}

const secondsSince = (started: number) => (performance.now() - started) / 1000;

export function observedChatModel(
  model: ChatModel,
  name: string,
  observer: ModelCallObserver,
): ChatModel {
  return {
    async generate(request: GenerationRequest) {
      const started = performance.now();
      try {
        const result = await model.generate(request);
        observer.modelCall({
          model: name,
          kind: 'chat',
          seconds: secondsSince(started),
          outcome: 'ok',
          usage: result.usage,
        });
        return result;
      } catch (error) {
        observer.modelCall({
          model: name,
          kind: 'chat',
          seconds: secondsSince(started),
          ...failure(error),
        });
        throw error;
      }
    },
    stream(request: GenerationRequest): AsyncIterable<StreamPart> {
      return {
        [Symbol.asyncIterator]() {
          const started = performance.now();
          const inner = model.stream(request)[Symbol.asyncIterator]();
          let reported = false;
          const report = (record: Omit<ModelCallRecord, 'model' | 'kind' | 'seconds'>) => {
            if (reported) return;
            reported = true;
            observer.modelCall({
              model: name,
              kind: 'chat',
              seconds: secondsSince(started),
              ...record,
            });
          };
          return {
            async next() {
              try {
                const step = await inner.next();
                if (step.done !== true && step.value.type === 'finish') {
                  report({ outcome: 'ok', usage: step.value.usage });
                }
                return step;
              } catch (error) {
                report(failure(error));
                throw error;
              }
            },
            async return(value?: unknown) {
              // The consumer stopped before the finish part: the client went away.
              report({ outcome: 'aborted' });
              return (await inner.return?.(value)) ?? { done: true, value: undefined };
            },
          };
        },
      };
    },
    countTokens: (messages) => model.countTokens(messages),
  };
}

export function observedEmbeddingModel(
  model: EmbeddingModel,
  name: string,
  observer: ModelCallObserver,
): EmbeddingModel {
  return {
    async embed(texts, signal, attribution) {
      const started = performance.now();
      try {
        const result = await model.embed(texts, signal, attribution);
        observer.modelCall({
          model: name,
          kind: 'embedding',
          seconds: secondsSince(started),
          outcome: 'ok',
          usage: { promptTokens: result.tokens, completionTokens: 0 },
        });
        return result;
      } catch (error) {
        observer.modelCall({
          model: name,
          kind: 'embedding',
          seconds: secondsSince(started),
          ...failure(error),
        });
        throw error;
      }
    },
  };
}
