// One chat turn of a voice conversation: the model's answer streamed as text and, sentence by
// sentence, as audio (answer-speaker.ts), until it ends or is interrupted (its controller aborted).
import type { ChatService, ChatStreamEvent } from '../chat/chat-service.js';
import { AnswerSpeaker } from './answer-speaker.js';
import type { SpeechService } from './speech-service.js';
import type { VoiceEvent, VoiceSettings } from './voice-events.js';

type ChatOutcome = Extract<ChatStreamEvent, { type: 'end' }>['outcome'];

/** What a turn needs of its conversation. */
export interface TurnHost {
  readonly settings: VoiceSettings;
  readonly chat: ChatService;
  readonly speech: SpeechService;
  emit(event: VoiceEvent): void;
  /** The conversation the first turn created. */
  onConversation(conversationId: string): void;
  isClosed(): boolean;
  /** The turn is over: it no longer answers (unless another already took its place). */
  release(turn: AnswerTurn): void;
  /** Audio of this many seconds was sent for the client to play. */
  played(durationSeconds: number): void;
  fail(turnId: string, error: unknown): void;
  /** `turn_end` of a turn that was interrupted. */
  endInterrupted(turnId: string): void;
}

export class AnswerTurn {
  /** Aborted to interrupt the turn: the model, the synthesis and what is not sent yet stop. */
  readonly controller = new AbortController();
  private readonly speaker: AnswerSpeaker;

  constructor(
    readonly id: string,
    private readonly host: TurnHost,
  ) {
    this.speaker = new AnswerSpeaker({
      settings: host.settings,
      speech: host.speech,
      turnId: id,
      signal: this.controller.signal,
      isClosed: () => host.isClosed(),
      played: (durationSeconds) => host.played(durationSeconds),
      emit: (event) => host.emit(event),
      fail: (error) => host.fail(id, error),
    });
  }

  /** Answers `text`; settles once the answer ended, failed or was interrupted. */
  async run(text: string): Promise<void> {
    const events = await this.open(text);
    if (events !== null) await this.relay(events);
  }

  /** The chat model's answer to `text`, or null when it could not start (reported here). */
  private async open(text: string): Promise<AsyncGenerator<ChatStreamEvent> | null> {
    const { settings } = this.host;
    const { signal } = this.controller;
    try {
      return await this.host.chat.openStream({
        accountId: settings.accountId,
        apiKeyId: settings.apiKeyId,
        userId: settings.userId,
        conversationId: settings.conversationId,
        persist: true,
        messages: [{ role: 'user', content: text }],
        model: settings.model,
        temperature: undefined,
        maxTokens: undefined,
        signal,
        route: settings.route,
      });
    } catch (error) {
      this.host.release(this);
      if (!signal.aborted) this.host.fail(this.id, error);
      // Interrupted before its answer began: it still ends, like one interrupted mid-answer.
      else if (!this.host.isClosed()) this.host.endInterrupted(this.id);
      return null;
    }
  }

  /** The answer's events as they come: text deltas, its sentences spoken, then its end. */
  private async relay(events: AsyncGenerator<ChatStreamEvent>): Promise<void> {
    const { signal } = this.controller;
    try {
      for await (const event of events) {
        if (signal.aborted) break;
        if (event.type === 'start') {
          this.adoptConversation(event.conversationId);
        } else if (event.type === 'delta') {
          this.host.emit({
            type: 'text_response',
            turn_id: this.id,
            delta: event.text,
            final: false,
          });
          this.speaker.push(event.text);
        } else if (event.type === 'end') {
          return await this.end(event.outcome);
        } else if (event.type === 'error') {
          this.host.fail(this.id, event.error);
        }
        // Voice turns are text only: no tools are offered, so no tool calls or refusals come.
      }
    } catch (error) {
      if (!signal.aborted) this.host.fail(this.id, error);
    } finally {
      this.host.release(this);
      // An interrupted turn is not stored: the chat service keeps only answers that completed.
      if (signal.aborted && !this.host.isClosed()) this.host.endInterrupted(this.id);
    }
  }

  /** The conversation the first turn created becomes this one's. */
  private adoptConversation(conversationId: string | null): void {
    const { settings } = this.host;
    if (conversationId !== null && settings.conversationId === null) {
      settings.conversationId = conversationId;
      this.host.onConversation(conversationId);
    }
  }

  /** The whole answer's text, the rest of it spoken, and `turn_end` unless it was interrupted. */
  private async end(outcome: ChatOutcome): Promise<void> {
    this.speaker.flush();
    this.host.emit({
      type: 'text_response',
      turn_id: this.id,
      text: outcome.text,
      final: true,
      conversation_id: outcome.conversationId,
      message_id: outcome.messageId,
    });
    await this.speaker.finished();
    this.host.release(this);
    if (!this.controller.signal.aborted) {
      this.host.emit({
        type: 'turn_end',
        turn_id: this.id,
        conversation_id: outcome.conversationId,
        message_id: outcome.messageId,
        interrupted: false,
      });
    }
  }
}
