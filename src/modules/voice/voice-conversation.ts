// One real-time voice conversation, whatever carries it: audio in → voice activity detection →
// streamed transcription → a chat turn (stored like any chat) → the answer's text deltas and its
// audio, synthesised sentence by sentence while the model still writes; speech during the answer
// interrupts it (barge-in). It sees no socket: it is given audio and text, and emits events.
// Transcription is utterance-transcription.ts; each answer is an AnswerTurn (answer-turn.ts).
import { AppError } from '../../errors/app-error.js';
import { newId } from '../../ids.js';
import { RequestAbortedError, UpstreamError } from '../../models/spec.js';
import type { InputFormat } from '../../audio/audio-types.js';
import { vadFrameSamples, vadSampleRate, VoiceActivityDetector } from '../../audio/vad.js';
import { AnswerTurn, type TurnHost } from './answer-turn.js';
import {
  createResampler,
  openTranscription,
  resample,
  transcribeUtterance,
  transcribeWhole,
  type Resampler,
  type Utterance,
} from './utterance-transcription.js';
import type { VoiceConversationOptions } from './voice-events.js';

export type { VoiceConversationOptions, VoiceEvent, VoiceSettings } from './voice-events.js';

export class VoiceConversation {
  private detector: VoiceActivityDetector | null = null;
  private resampler: Resampler | null = null;
  private pending = new Int16Array(0);
  private preRoll: Int16Array[] = [];
  private speechFrames = 0;
  private utterance: Utterance | null = null;
  private turn: AnswerTurn | null = null;
  /** When the audio sent so far will have finished playing at the client. */
  private playbackEndsAt = 0;
  private closed = false;
  private readonly now: () => number;

  /** What its turns see of the conversation. */
  private readonly turnHost: TurnHost;

  constructor(private readonly options: VoiceConversationOptions) {
    this.now = options.now ?? Date.now;
    this.turnHost = {
      settings: options.settings,
      chat: options.chat,
      speech: options.speech,
      emit: (event) => options.emit(event),
      onConversation: (conversationId) => options.onConversation(conversationId),
      isClosed: () => this.closed,
      release: (turn) => {
        if (this.turn === turn) this.turn = null;
      },
      played: (durationSeconds) => {
        const start = Math.max(this.now(), this.playbackEndsAt);
        this.playbackEndsAt = start + durationSeconds * 1000;
      },
      fail: (turnId, error) => this.fail(turnId, error),
      endInterrupted: (turnId) => this.endInterrupted(turnId),
    };
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
      const resampler = await createResampler(this.options.settings.sampleRate);
      if (this.closed) return resampler.destroy();
      this.resampler = resampler;
    }
  }

  /** PCM16 at the session's rate, as it is captured. */
  pushAudio(samples: Int16Array): void {
    if (this.closed || this.detector === null) return;
    const audio = this.resampler === null ? samples : resample(this.resampler, samples);
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
      const result = await transcribeWhole(this.options, audio, format, sampleRate);
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
      utterance.stream = openTranscription(this.options, (text) => {
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
      });
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
      const { text, confidence, language } = await transcribeUtterance(this.options, utterance);
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
    if (!counted && !(await this.admitTypedTurn(turnId))) return;
    if (this.closed) return;
    const turn = new AnswerTurn(turnId, this.turnHost);
    this.turn = turn;
    await turn.run(text);
  }

  /**
   * A typed turn counts against the rate limit before it starts; typed again while it waited for
   * its quota, the newer message interrupts it before it starts (a burst of messages starts one
   * answer, not one per message).
   */
  private async admitTypedTurn(turnId: string): Promise<boolean> {
    const refused = await this.options.consumeTurn();
    if (refused !== null) {
      this.fail(turnId, refused);
      return false;
    }
    if (this.latestTypedTurn !== null && this.latestTypedTurn !== turnId && !this.closed) {
      this.endInterrupted(turnId);
      return false;
    }
    return true;
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
