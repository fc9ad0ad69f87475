// Speaks one answer while the model still writes it: its text is cut into sentences, and each is
// synthesised in order and sent as an `audio_response` once the one before it was.
import { SentenceStream } from '../../text/sentence-stream.js';
import type { SpeechService } from './speech-service.js';
import { voiceAttribution, type VoiceEvent, type VoiceSettings } from './voice-events.js';

export interface AnswerSpeakerOptions {
  settings: VoiceSettings;
  speech: SpeechService;
  turnId: string;
  /** Aborted when the turn is interrupted: what is not spoken yet is dropped. */
  signal: AbortSignal;
  /** Whether the conversation has closed (nothing more is sent). */
  isClosed: () => boolean;
  /** Audio of this many seconds was sent: the client plays it after what it has. */
  played: (durationSeconds: number) => void;
  emit: (event: VoiceEvent) => void;
  /** A sentence that could not be spoken (the next ones still are). */
  fail: (error: unknown) => void;
}

export class AnswerSpeaker {
  private readonly sentences = new SentenceStream();
  private synthesis: Promise<void> = Promise.resolve();
  private sequence = 0;

  constructor(private readonly options: AnswerSpeakerOptions) {}

  /** More of the answer's text: each sentence it completes is spoken. */
  push(text: string): void {
    for (const sentence of this.sentences.push(text)) this.speak(sentence);
  }

  /** The answer is complete: what is left of it is spoken too. */
  flush(): void {
    for (const sentence of this.sentences.flush()) this.speak(sentence);
  }

  /** Settles once every sentence so far was spoken (or failed). */
  finished(): Promise<void> {
    return this.synthesis;
  }

  private speak(sentence: string): void {
    const { settings, signal } = this.options;
    if (settings.ttsModel === null) return;
    const model = settings.ttsModel;
    this.synthesis = this.synthesis
      .then(async () => {
        if (signal.aborted) return;
        const spoken = await this.options.speech.synthesize({
          text: sentence,
          voice: settings.voiceId,
          language: settings.language,
          model,
          format: settings.audioFormat,
          sampleRate: undefined,
          signal,
          attribution: voiceAttribution(settings),
        });
        if (signal.aborted || this.options.isClosed()) return;
        this.options.played(spoken.durationSeconds);
        this.options.emit({
          type: 'audio_response',
          turn_id: this.options.turnId,
          sequence: this.sequence++,
          audio: Buffer.from(spoken.audio).toString('base64'),
          format: spoken.format,
          sample_rate: spoken.sampleRate,
          duration_seconds: Math.round(spoken.durationSeconds * 1000) / 1000,
          text: sentence,
        });
      })
      // A sentence that failed is reported; the next ones are still spoken.
      .catch((error: unknown) => {
        if (!signal.aborted) this.options.fail(error);
      });
  }
}
