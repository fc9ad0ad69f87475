// What decoded audio may be: the header fields every decoder's output is checked against, and a
// budget of decoded samples, so a small compressed file that expands to hours of audio (a
// "decompression bomb": FLAC's constant frames, Opus's tiny packets) fails after decoding at most
// the allowed duration, instead of filling the worker's memory first.
import { AudioFormatError, type DecodedAudio } from './audio-types.js';

/** Sample rates accepted from a file's header (8 kHz telephony up to 192 kHz studio audio). */
export const minInputSampleRate = 1000;
export const maxInputSampleRate = 192_000;
export const maxInputChannels = 8;
/**
 * Sample values (frames × channels) per allowed second: 48 kHz stereo. More channels or a higher
 * rate shorten the duration accepted rather than multiplying the memory a request may take.
 */
const valuesPerSecond = 96_000;

export interface DecodeLimits {
  /** The longest audio accepted, in seconds (the `speech.max_audio_seconds` setting). */
  maxSeconds: number;
}

/** Fails unless `rate` and `channels` are a sample rate and a channel count audio can have. */
export function checkShape(what: string, rate: number, channels: number): void {
  if (!Number.isInteger(rate) || rate < minInputSampleRate || rate > maxInputSampleRate) {
    throw new AudioFormatError(
      `The ${what} audio declares a sample rate of ${Number.isFinite(rate) ? rate : 'none'} Hz; ${minInputSampleRate} to ${maxInputSampleRate} Hz are accepted.`,
    );
  }
  if (!Number.isInteger(channels) || channels < 1 || channels > maxInputChannels) {
    throw new AudioFormatError(
      `The ${what} audio declares ${Number.isFinite(channels) ? channels : 'no'} channels; 1 to ${maxInputChannels} are accepted.`,
    );
  }
}

/** Fails when `frames` at `rate` (with `channels`) are more than the limits accept. */
export function checkLength(
  limits: DecodeLimits,
  frames: number,
  rate: number,
  channels: number,
  exact: boolean,
): void {
  const seconds = frames / rate;
  const maxValues = limits.maxSeconds * valuesPerSecond;
  if (seconds > limits.maxSeconds || frames * channels > maxValues) {
    const allowed = Math.min(limits.maxSeconds, maxValues / channels / rate);
    throw new AudioFormatError(
      exact
        ? `The audio lasts ${seconds.toFixed(1)} s; at most ${trim(allowed)} s are accepted${allowed < limits.maxSeconds ? ` at ${rate} Hz with ${channels} channels` : ''}.`
        : `The audio lasts more than ${trim(allowed)} s; at most ${trim(allowed)} s are accepted${allowed < limits.maxSeconds ? ` at ${rate} Hz with ${channels} channels` : ''}.`,
    );
  }
}

function trim(seconds: number): string {
  return Number.isInteger(seconds) ? String(seconds) : seconds.toFixed(1);
}

/** One decoder's output for a part of the input. */
export interface DecodedPart {
  channelData: Float32Array[];
  samplesDecoded: number;
  sampleRate: number;
  errors: readonly { message: string }[];
}

/**
 * Gathers what a decoder produces part by part, checking each part's rate and channels and the
 * running length against the limits; `audio()` joins the parts.
 */
export class SampleCollector {
  private readonly parts: Float32Array[][] = [];
  private frames = 0;
  private rate = 0;
  private channels = 0;
  private errors = 0;

  constructor(
    private readonly what: string,
    private readonly limits: DecodeLimits,
  ) {}

  add(part: DecodedPart): void {
    this.errors += part.errors.length;
    const frames = part.samplesDecoded;
    if (!(frames > 0)) return;
    const channels = part.channelData.length;
    checkShape(this.what, part.sampleRate, channels);
    if (this.frames === 0) {
      this.rate = part.sampleRate;
      this.channels = channels;
    } else if (part.sampleRate !== this.rate || channels !== this.channels) {
      throw new AudioFormatError(
        `The ${this.what} audio changes its sample rate or channels part way through; send one stream per file.`,
      );
    }
    this.frames += frames;
    checkLength(this.limits, this.frames, this.rate, this.channels, false);
    this.parts.push(part.channelData.map((channel) => channel.subarray(0, frames)));
  }

  audio(): DecodedAudio {
    if (this.frames === 0) {
      throw new AudioFormatError(
        this.errors > 0
          ? `The ${this.what} audio could not be decoded: the file is corrupt or not ${this.what}.`
          : `The ${this.what} audio holds no samples that could be decoded.`,
      );
    }
    const channels = Array.from({ length: this.channels }, (_, index) => {
      const joined = new Float32Array(this.frames);
      let offset = 0;
      for (const part of this.parts) {
        const samples = part[index]!;
        for (let at = 0; at < samples.length; at += 1) {
          const value = samples[at]!;
          // A corrupt stream may decode to NaN or infinities: they are silence here.
          joined[offset + at] = Number.isFinite(value) ? value : 0;
        }
        offset += samples.length;
      }
      return joined;
    });
    return { channels, sampleRate: this.rate };
  }
}
