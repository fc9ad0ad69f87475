// One real-time voice conversation, whatever carries it: audio in → voice activity detection →
// streamed transcription → a chat turn (stored like any chat) → the answer's text deltas and its
// audio, synthesised sentence by sentence while the model still writes; speech during the answer
// interrupts it (barge-in). It sees no socket: it is given audio and text, and emits events.
import type { Logger } from 'pino';
import type { ChatService, ChatStreamEvent } from '../modules/chat/chat-service.js';
import type { AppConfig } from '../config/config.js';
import { AppError } from '../errors/app-error.js';
import { newId } from '../ids.js';
import type { ModelRegistry } from '../models/model-registry.js';
import { RequestAbortedError, UpstreamError } from '../models/spec.js';
import type { InputFormat, OutputFormat } from '../audio/audio-types.js';
import { SentenceStream } from '../text/sentence-stream.js';
import type { TranscriptionStream } from '../models/speech/speech-models.js';
import type { SpeechService } from '../speech/speech-service.js';
import { vadFrameSamples, vadSampleRate, VoiceActivityDetector } from '../audio/vad.js';

/** What the conversation tells its client; the real-time layer serialises these as they are. */
export type VoiceEvent =
  | { type: 'speech_started'; turn_id: string }
  | {
      type: 'transcript';
      turn_id: string;
      text: string;
      is_final: boolean;
      confidence: number | null;
      language: string | null;
    }
  | { type: 'text_response'; turn_id: string; delta: string; final: false }
  | {
      type: 'text_response';
      turn_id: string;
      text: string;
      final: true;
      conversation_id: string | null;
      message_id: string;
    }
  | {
      type: 'audio_response';
      turn_id: string;
      sequence: number;
      audio: string;
      format: OutputFormat;
      sample_rate: number;
      duration_seconds: number;
      text: string;
    }
  | { type: 'interrupt'; turn_id: string; reason: 'user_speech' | 'user_text' }
  | {
      type: 'turn_end';
      turn_id: string;
      conversation_id: string | null;
      message_id: string | null;
      interrupted: boolean;
    }
  | { type: 'error'; turn_id: string | null; error: ReturnType<AppError['toBody']>['error'] };

export interface VoiceSettings {
  accountId: string;
  /** The key that opened the socket (or the voice session): its turns are recorded under it. */
  apiKeyId: string;
  userId: string | null;
  conversationId: string | null;
  model: string | undefined;
  sttModel: string | undefined;
  /** Null: answer in text only. */
  ttsModel: string | null;
  voiceId: string | null;
  language: string | null;
  /** Rate of the PCM the client streams. */
  sampleRate: number;
  audioFormat: OutputFormat;
}

export interface VoiceConversationOptions {
  settings: VoiceSettings;
  chat: ChatService;
  speech: SpeechService;
  models: ModelRegistry;
  limits: AppConfig['speech']['realtime'];
  /** Counts a user turn against the key's rate limit; an error refuses the turn. */
  consumeTurn: () => Promise<AppError | null>;
  emit: (event: VoiceEvent) => void;
  /** The conversation the first turn created. */
  onConversation: (conversationId: string) => void;
  logger: Logger;
  now?: () => number;
}

interface ActiveTurn {
  id: string;
  controller: AbortController;
}

interface Utterance {
  turnId: string;
  stream: TranscriptionStream | null;
  /** Kept when the engine cannot decode while audio arrives. */
  chunks: Int16Array[];
  samples: number;
  silentFrames: number;
  startedAt: number;
}

type Resampler = { full(data: Float32Array): Float32Array; destroy(): void };

export class VoiceConversation {
  private detector: VoiceActivityDetector | null = null;
  private resampler: Resampler | null = null;
  private pending = new Int16Array(0);
  private preRoll: Int16Array[] = [];
  private speechFrames = 0;
  private utterance: Utterance | null = null;
  private turn: ActiveTurn | null = null;
  /** When the audio sent so far will have finished playing at the client. */
  private playbackEndsAt = 0;
  private closed = false;
  private readonly now: () => number;

  constructor(private readonly options: VoiceConversationOptions) {
    this.now = options.now ?? Date.now;
  }

  get conversationId(): string | null {
    return this.options.settings.conversationId;
  }

  /** The last typed turn: an earlier one still waiting to start is superseded by it. */
  private latestTypedTurn: string | null = null;

  /** Loads the voice activity detector and, for rates other than 16 kHz, a resampler. */
  async start(): Promise<void> {
    const detector = await VoiceActivityDetector.create(this.options.limits.vadMode);
    // The client may have gone while the detector loaded: nothing would free it later.
    if (this.closed) return detector.free();
    this.detector = detector;
    try {
      const name = this.options.speech.resolveTranscriptionModel(
        this.options.settings.sttModel,
        undefined,
      );
      this.options.models.model('transcription', name).prewarm?.();
    } catch {
      // An unavailable recogniser is reported when the user first speaks.
    }
    if (this.options.settings.sampleRate !== vadSampleRate) {
      const { create, ConverterType } = (await import('@alexanderolsen/libsamplerate-js')).default;
      const resampler = await create(1, this.options.settings.sampleRate, vadSampleRate, {
        converterType: ConverterType.SRC_SINC_FASTEST,
      });
      if (this.closed) return resampler.destroy();
      this.resampler = resampler;
    }
  }

  /** PCM16 at the session's rate, as it is captured. */
  pushAudio(samples: Int16Array): void {
    if (this.closed || this.detector === null) return;
    let audio = samples;
    if (this.resampler !== null) {
      const floats = new Float32Array(samples.length);
      for (let index = 0; index < samples.length; index += 1)
        floats[index] = samples[index]! / 32768;
      const converted = this.resampler.full(floats);
      audio = new Int16Array(converted.length);
      for (let index = 0; index < converted.length; index += 1) {
        audio[index] = Math.max(-32768, Math.min(32767, Math.round(converted[index]! * 32767)));
      }
    }
    const joined = new Int16Array(this.pending.length + audio.length);
    joined.set(this.pending);
    joined.set(audio, this.pending.length);
    let offset = 0;
    while (offset + vadFrameSamples <= joined.length) {
      this.frame(joined.slice(offset, offset + vadFrameSamples));
      offset += vadFrameSamples;
    }
    this.pending = joined.slice(offset);
  }

  /** A typed user message: interrupts an answer in progress and starts a turn. */
  pushText(text: string): void {
    if (this.closed) return;
    if (this.isAnswering()) this.interrupt('user_text');
    const turnId = newId('msg');
    this.latestTypedTurn = turnId;
    void this.runTurn(turnId, text);
  }

  /** A whole utterance (the general channel's `audio` message): transcribe, then answer. */
  async pushUtterance(
    audio: Uint8Array,
    format: InputFormat | null,
    sampleRate: number | undefined,
  ): Promise<void> {
    const turnId = newId('msg');
    if (this.isAnswering()) this.interrupt('user_speech');
    const refused = await this.options.consumeTurn();
    if (refused !== null) return this.fail(turnId, refused);
    try {
      const result = await this.options.speech.transcribe({
        audio,
        encoding: format,
        sampleRate,
        channels: 1,
        language: this.options.settings.language,
        model: this.options.settings.sttModel,
        provider: undefined,
        signal: AbortSignal.timeout(60_000),
      });
      this.options.emit({
        type: 'transcript',
        turn_id: turnId,
        text: result.text,
        is_final: true,
        confidence: result.confidence,
        language: result.language,
      });
      if (result.text !== '') await this.runTurn(turnId, result.text, true);
    } catch (error) {
      this.fail(turnId, error);
    }
  }

  close(): void {
    this.closed = true;
    this.turn?.controller.abort();
    this.turn = null;
    this.utterance?.stream?.abort();
    this.utterance = null;
    this.detector?.free();
    this.detector = null;
    this.resampler?.destroy();
    this.resampler = null;
  }

  private frame(frame: Int16Array): void {
    const speech = this.detector!.isSpeech(frame);
    const utterance = this.utterance;
    if (utterance === null) {
      this.preRoll.push(frame);
      // About 300 ms before the onset is kept: the detector needs a few frames to be sure.
      if (this.preRoll.length > 15) this.preRoll.shift();
      this.speechFrames = speech ? this.speechFrames + 1 : 0;
      if (this.speechFrames * 20 >= this.options.limits.speechStartMs) this.beginUtterance();
      return;
    }
    this.write(utterance, frame);
    utterance.silentFrames = speech ? 0 : utterance.silentFrames + 1;
    const tooLong = utterance.samples / vadSampleRate >= this.options.limits.maxUtteranceSeconds;
    if (utterance.silentFrames * 20 >= this.options.limits.endOfSpeechMs || tooLong) {
      this.utterance = null;
      this.speechFrames = 0;
      void this.endUtterance(utterance);
    }
  }

  private beginUtterance(): void {
    // Speech while the answer plays is barge-in: stop the model, the synthesis and the client.
    if (this.isAnswering()) this.interrupt('user_speech');
    const turnId = newId('msg');
    const utterance: Utterance = {
      turnId,
      stream: null,
      chunks: [],
      samples: 0,
      silentFrames: 0,
      startedAt: this.now(),
    };
    try {
      const name = this.options.speech.resolveTranscriptionModel(
        this.options.settings.sttModel,
        undefined,
      );
      const model = this.options.models.model('transcription', name);
      if (model.openStream !== undefined && model.sampleRate === vadSampleRate) {
        utterance.stream = model.openStream({
          language: this.options.settings.language,
          signal: new AbortController().signal,
          onInterim: (text) => {
            if (this.utterance === utterance && text !== '') {
              this.options.emit({
                type: 'transcript',
                turn_id: turnId,
                text,
                is_final: false,
                confidence: null,
                language: null,
              });
            }
          },
        });
      }
    } catch (error) {
      this.fail(turnId, error);
      return;
    }
    this.utterance = utterance;
    this.options.emit({ type: 'speech_started', turn_id: turnId });
    for (const frame of this.preRoll.splice(0)) this.write(utterance, frame);
  }

  private write(utterance: Utterance, frame: Int16Array): void {
    utterance.samples += frame.length;
    if (utterance.stream !== null) utterance.stream.write(frame);
    else utterance.chunks.push(frame);
  }

  private async endUtterance(utterance: Utterance): Promise<void> {
    try {
      const refused = await this.options.consumeTurn();
      if (refused !== null) {
        utterance.stream?.abort();
        return this.fail(utterance.turnId, refused);
      }
      let text: string;
      let confidence: number | null;
      let language: string | null;
      if (utterance.stream !== null) {
        const result = await utterance.stream.finish();
        ({ text, confidence, language } = result);
      } else {
        const samples = new Int16Array(utterance.samples);
        let offset = 0;
        for (const chunk of utterance.chunks) {
          samples.set(chunk, offset);
          offset += chunk.length;
        }
        const name = this.options.speech.resolveTranscriptionModel(
          this.options.settings.sttModel,
          undefined,
        );
        const model = this.options.models.model('transcription', name);
        const result = await this.options.speech.transcribePcm(
          name,
          { samples: await this.toRate(samples, model.sampleRate), sampleRate: model.sampleRate },
          this.options.settings.language,
          AbortSignal.timeout(60_000),
        );
        ({ text, confidence, language } = result);
      }
      if (this.closed) return;
      this.options.emit({
        type: 'transcript',
        turn_id: utterance.turnId,
        text,
        is_final: true,
        confidence,
        language: language ?? this.options.settings.language?.split('-')[0] ?? null,
      });
      if (text.trim() !== '') await this.runTurn(utterance.turnId, text, true);
    } catch (error) {
      this.fail(utterance.turnId, error);
    }
  }

  private async toRate(samples: Int16Array, rate: number): Promise<Int16Array> {
    if (rate === vadSampleRate) return samples;
    const { create, ConverterType } = (await import('@alexanderolsen/libsamplerate-js')).default;
    const converter = await create(1, vadSampleRate, rate, {
      converterType: ConverterType.SRC_SINC_FASTEST,
    });
    try {
      const floats = Float32Array.from(samples, (value) => value / 32768);
      return Int16Array.from(converter.simple(floats), (value) =>
        Math.max(-32768, Math.min(32767, Math.round(value * 32767))),
      );
    } finally {
      converter.destroy();
    }
  }

  private isAnswering(): boolean {
    return this.turn !== null || this.now() < this.playbackEndsAt;
  }

  private interrupt(reason: 'user_speech' | 'user_text'): void {
    const turn = this.turn;
    this.playbackEndsAt = 0;
    if (turn === null) return;
    this.turn = null;
    turn.controller.abort();
    this.options.emit({ type: 'interrupt', turn_id: turn.id, reason });
  }

  /** One chat turn: the answer streamed as text and, sentence by sentence, as audio. */
  private async runTurn(turnId: string, text: string, counted = false): Promise<void> {
    if (!counted) {
      const refused = await this.options.consumeTurn();
      if (refused !== null) return this.fail(turnId, refused);
      // Typed again while this turn waited for its quota: the newer message interrupts this one
      // before it starts (a burst of messages starts one answer, not one per message).
      if (this.latestTypedTurn !== null && this.latestTypedTurn !== turnId && !this.closed) {
        return this.endInterrupted(turnId);
      }
    }
    if (this.closed) return;
    const controller = new AbortController();
    const turn: ActiveTurn = { id: turnId, controller };
    this.turn = turn;
    const { settings } = this.options;
    const sentences = new SentenceStream();
    let synthesis: Promise<void> = Promise.resolve();
    let sequence = 0;
    const speak = (sentence: string) => {
      if (settings.ttsModel === null) return;
      const model = settings.ttsModel;
      synthesis = synthesis
        .then(async () => {
          if (controller.signal.aborted) return;
          const spoken = await this.options.speech.synthesize({
            text: sentence,
            voice: settings.voiceId,
            language: settings.language,
            model,
            format: settings.audioFormat,
            sampleRate: undefined,
            signal: controller.signal,
          });
          if (controller.signal.aborted || this.closed) return;
          const start = Math.max(this.now(), this.playbackEndsAt);
          this.playbackEndsAt = start + spoken.durationSeconds * 1000;
          this.options.emit({
            type: 'audio_response',
            turn_id: turnId,
            sequence: sequence++,
            audio: Buffer.from(spoken.audio).toString('base64'),
            format: spoken.format,
            sample_rate: spoken.sampleRate,
            duration_seconds: Math.round(spoken.durationSeconds * 1000) / 1000,
            text: sentence,
          });
        })
        // A sentence that failed is reported; the next ones are still spoken.
        .catch((error: unknown) => {
          if (!controller.signal.aborted) this.fail(turnId, error);
        });
    };
    let events: AsyncGenerator<ChatStreamEvent>;
    try {
      events = await this.options.chat.openStream({
        accountId: settings.accountId,
        apiKeyId: settings.apiKeyId,
        userId: settings.userId,
        conversationId: settings.conversationId,
        persist: true,
        messages: [{ role: 'user', content: text }],
        model: settings.model,
        temperature: undefined,
        maxTokens: undefined,
        signal: controller.signal,
      });
    } catch (error) {
      if (this.turn === turn) this.turn = null;
      if (!controller.signal.aborted) this.fail(turnId, error);
      // Interrupted before its answer began: it still ends, like one interrupted mid-answer.
      else if (!this.closed) this.endInterrupted(turnId);
      return;
    }
    try {
      for await (const event of events) {
        if (controller.signal.aborted) break;
        if (event.type === 'start') {
          if (event.conversationId !== null && settings.conversationId === null) {
            settings.conversationId = event.conversationId;
            this.options.onConversation(event.conversationId);
          }
        } else if (event.type === 'delta') {
          this.options.emit({
            type: 'text_response',
            turn_id: turnId,
            delta: event.text,
            final: false,
          });
          for (const sentence of sentences.push(event.text)) speak(sentence);
        } else if (event.type === 'end') {
          for (const sentence of sentences.flush()) speak(sentence);
          this.options.emit({
            type: 'text_response',
            turn_id: turnId,
            text: event.outcome.text,
            final: true,
            conversation_id: event.outcome.conversationId,
            message_id: event.outcome.messageId,
          });
          await synthesis;
          if (this.turn === turn) this.turn = null;
          if (!controller.signal.aborted) {
            this.options.emit({
              type: 'turn_end',
              turn_id: turnId,
              conversation_id: event.outcome.conversationId,
              message_id: event.outcome.messageId,
              interrupted: false,
            });
          }
          return;
        } else {
          this.fail(turnId, event.error);
        }
      }
    } catch (error) {
      if (!controller.signal.aborted) this.fail(turnId, error);
    } finally {
      if (this.turn === turn) this.turn = null;
      // An interrupted turn is not stored: the chat service keeps only answers that completed.
      if (controller.signal.aborted && !this.closed) this.endInterrupted(turnId);
    }
  }

  private endInterrupted(turnId: string): void {
    this.options.emit({
      type: 'turn_end',
      turn_id: turnId,
      conversation_id: this.options.settings.conversationId,
      message_id: null,
      interrupted: true,
    });
  }

  private fail(turnId: string | null, error: unknown): void {
    if (this.closed || error instanceof RequestAbortedError) return;
    const appError =
      error instanceof AppError
        ? error
        : new UpstreamError('upstream_error', 'The voice turn could not be completed.', {
            cause: error,
          });
    if (!(error instanceof AppError)) this.options.logger.warn({ err: error }, 'voice turn failed');
    this.options.emit({ type: 'error', turn_id: turnId, error: appError.toBody().error });
  }
}
