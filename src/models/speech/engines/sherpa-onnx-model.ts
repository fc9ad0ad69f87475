// Transcription by sherpa-onnx (in-process ONNX Runtime, sherpa-onnx-node's prebuilt binaries):
// Whisper, transducer, SenseVoice, Paraformer and CTC models whose files `npm run models -- pull`
// fetches. Recognisers are created and run asynchronously, off the event loop.
import { createRequire } from 'node:module';
import type { EngineModelDefinition } from '../../../config/config.js';
import { UpstreamError } from '../../spec.js';
import { int16ToFloat } from '../../../audio/audio-types.js';
import type { Transcription, TranscriptionModel, TranscriptionRequest } from '../speech-models.js';

interface SherpaResult {
  text: string;
  lang?: string;
  ys_log_probs?: number[];
}

interface SherpaStream {
  acceptWaveform(wave: { samples: Float32Array; sampleRate: number }): void;
}

interface SherpaRecognizer {
  createStream(): SherpaStream;
  decodeAsync(stream: SherpaStream): Promise<SherpaResult>;
}

export interface SherpaOnnx {
  OfflineRecognizer: { createAsync(config: unknown): Promise<SherpaRecognizer> };
}

const require = createRequire(import.meta.url);
let addon: { module: SherpaOnnx } | { error: string } | undefined;

/** The native addon, or why it cannot be loaded (no prebuilt binary for this platform). */
export function loadSherpaOnnx(): { module: SherpaOnnx } | { error: string } {
  if (addon === undefined) {
    try {
      addon = { module: require('sherpa-onnx-node') as SherpaOnnx };
    } catch (error) {
      addon = {
        error: `sherpa-onnx-node could not be loaded (${error instanceof Error ? error.message.split('\n')[0] : String(error)}); it ships binaries for Linux, macOS and Windows on x64 and arm64.`,
      };
    }
  }
  return addon;
}

/** Feature settings each family was trained with. */
function featuresOf(architecture: string): { sampleRate: number; featureDim: number } {
  return architecture === 'tdnn'
    ? { sampleRate: 8000, featureDim: 23 }
    : { sampleRate: 16_000, featureDim: 80 };
}

export class SherpaOnnxModel implements TranscriptionModel {
  readonly sampleRate: number;
  private recognizer: Promise<SherpaRecognizer> | undefined;

  constructor(private readonly definition: EngineModelDefinition) {
    this.sampleRate = featuresOf(definition.architecture ?? '').sampleRate;
  }

  async transcribe(request: TranscriptionRequest): Promise<Transcription> {
    const recognizer = await this.load();
    const stream = recognizer.createStream();
    stream.acceptWaveform({
      samples: int16ToFloat(request.audio.samples),
      sampleRate: request.audio.sampleRate,
    });
    let result: SherpaResult;
    try {
      result = await recognizer.decodeAsync(stream);
    } catch (error) {
      throw new UpstreamError('upstream_error', `sherpa-onnx failed to transcribe the audio.`, {
        cause: error,
        fallbackWorthy: false,
      });
    }
    const logProbabilities = result.ys_log_probs ?? [];
    const text = result.text.trim();
    return {
      text,
      // Whisper reports `<|en|>`; other families report nothing.
      language: result.lang?.replace(/^<\|(.*)\|>$/, '$1') || (request.language ?? null),
      confidence:
        logProbabilities.length > 0
          ? Math.exp(
              logProbabilities.reduce((sum, value) => sum + value, 0) / logProbabilities.length,
            )
          : text === ''
            ? 1
            : null,
    };
  }

  private load(): Promise<SherpaRecognizer> {
    this.recognizer ??= this.create().catch((error: unknown) => {
      this.recognizer = undefined;
      throw new UpstreamError(
        'model_unavailable',
        `Model '${this.definition.name}' could not be loaded by sherpa-onnx: ${error instanceof Error ? error.message : String(error)}. Check that its files are complete ('npm run models -- pull ${this.definition.name}').`,
        { cause: error },
      );
    });
    return this.recognizer;
  }

  private async create(): Promise<SherpaRecognizer> {
    const loaded = loadSherpaOnnx();
    if ('error' in loaded) throw new Error(loaded.error);
    const file = (role: string) =>
      this.definition.files.find((candidate) => candidate.role === role)?.file ?? '';
    const architecture = this.definition.architecture ?? '';
    const families: Record<string, Record<string, unknown>> = {
      whisper: {
        whisper: { encoder: file('encoder'), decoder: file('decoder'), task: 'transcribe' },
      },
      transducer: {
        transducer: { encoder: file('encoder'), decoder: file('decoder'), joiner: file('joiner') },
      },
      sense_voice: { senseVoice: { model: file('model'), useInverseTextNormalization: 1 } },
      paraformer: { paraformer: { model: file('model') } },
      nemo_ctc: { nemoCtc: { model: file('model') } },
      zipformer_ctc: { zipformerCtc: { model: file('model') } },
      tdnn: { tdnn: { model: file('model') } },
    };
    return loaded.module.OfflineRecognizer.createAsync({
      featConfig: featuresOf(architecture),
      modelConfig: {
        ...families[architecture],
        tokens: file('tokens'),
        numThreads: this.definition.threads,
        provider: 'cpu',
        debug: 0,
      },
      decodingMethod: 'greedy_search',
    });
  }
}
