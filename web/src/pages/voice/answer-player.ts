// Plays the spoken answer's chunks one after another as they arrive, and stops them all at once when
// the user speaks over the answer.
import { base64ToBytes, type VoiceEvent } from './voice-events';

type AudioMessage = Extract<VoiceEvent, { type: 'audio_response' }>;

/** The answer's audio as a buffer: raw 16-bit PCM at its rate, or a format the browser decodes. */
async function audioBufferOf(context: AudioContext, message: AudioMessage): Promise<AudioBuffer> {
  const bytes = base64ToBytes(message.audio);
  if (message.format !== 'pcm') return context.decodeAudioData(bytes.slice().buffer);
  const samples = new Int16Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.byteLength / 2));
  const buffer = context.createBuffer(1, samples.length, message.sample_rate);
  const channel = buffer.getChannelData(0);
  for (let index = 0; index < samples.length; index += 1)
    channel[index] = (samples[index] ?? 0) / 0x8000;
  return buffer;
}

export class AnswerPlayer {
  private playing: AudioBufferSourceNode[] = [];
  private playAt = 0;

  constructor(
    private readonly context: AudioContext,
    private readonly onSpeaking: (speaking: boolean) => void,
  ) {}

  async play(message: AudioMessage): Promise<void> {
    const buffer = await audioBufferOf(this.context, message);
    const source = this.context.createBufferSource();
    source.buffer = buffer;
    source.connect(this.context.destination);
    const start = Math.max(this.context.currentTime, this.playAt);
    source.start(start);
    this.playAt = start + buffer.duration;
    this.playing.push(source);
    this.onSpeaking(true);
    source.onended = () => {
      this.playing = this.playing.filter((item) => item !== source);
      if (this.playing.length === 0) this.onSpeaking(false);
    };
  }

  stop(): void {
    for (const source of this.playing) {
      try {
        source.stop();
      } catch {
        // already ended
      }
    }
    this.playing = [];
    this.playAt = 0;
  }
}
