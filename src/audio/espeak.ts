// eSpeak NG compiled to JavaScript by Emscripten (@echogarden/espeak-ng-emscripten, GPL-3.0; see
// docs/decisions.md): one instance per audio worker thread, loaded on first use (and warmed up
// when the service preloads the threads).

interface EspeakVoiceEntry {
  name: string;
  identifier: string;
  languages: { priority: number; name: string }[];
}

interface EspeakWorker {
  set_voice(name: string): number;
  set_rate(wordsPerMinute: number): number;
  list_voices(): EspeakVoiceEntry[];
  synthesize(text: string, callback: (samples: Int16Array | null, events: unknown[]) => void): void;
}

export interface EspeakVoice {
  id: string;
  name: string;
  languages: string[];
}

/** eSpeak's output rate. */
export const espeakSampleRate = 22_050;

let instance: Promise<EspeakWorker> | undefined;

function espeak(): Promise<EspeakWorker> {
  instance ??= (async () => {
    const { default: initialise } = (await import('@echogarden/espeak-ng-emscripten')) as {
      default: () => Promise<{ eSpeakNGWorker: new () => EspeakWorker }>;
    };
    const module = await initialise();
    return new module.eSpeakNGWorker();
  })();
  return instance;
}

let warmed: Promise<void> | undefined;

/**
 * Loads eSpeak NG and spends a few syntheses on it. The package is eSpeak compiled to JavaScript
 * by Emscripten, which V8 compiles in tiers: the first syntheses run several times slower than the
 * rest (150, 115 and 60 ms, then 15, for one sentence on the 2-core test machine). Worth it only
 * ahead of any request (`speech.preload`): on the first request itself the warm-up would only add
 * its three syntheses (~0.5 s of CPU) to the one asked for.
 */
export function espeakWarmUp(): Promise<void> {
  warmed ??= (async () => {
    const worker = await espeak();
    worker.set_voice('en-us');
    for (let round = 0; round < 3; round += 1) {
      worker.synthesize('The quick brown fox jumps over the lazy dog.', () => undefined);
    }
  })();
  return warmed;
}

/** `en-us` → `en-US`. */
function bcp47(tag: string): string {
  const [language = '', ...rest] = tag.split('-');
  return [language, ...rest.map((part) => (part.length === 2 ? part.toUpperCase() : part))].join(
    '-',
  );
}

/**
 * The voices, each named by its voice file (`en-us`, `fr`, `fr-be`: eSpeak's identifier without
 * its language family, lower-cased), which eSpeak takes as a voice name.
 */
export async function espeakVoices(): Promise<EspeakVoice[]> {
  const worker = await espeak();
  return worker
    .list_voices()
    .filter((voice) => voice.languages.length > 0)
    .map((voice) => ({
      id: (voice.identifier.split('/').pop() ?? voice.identifier).toLowerCase(),
      name: voice.name,
      languages: voice.languages.map((language) => bcp47(language.name)),
    }));
}

export class UnknownVoiceError extends Error {
  constructor(voice: string) {
    super(`eSpeak NG has no voice '${voice}'.`);
    this.name = 'UnknownVoiceError';
  }
}

/** Whether eSpeak accepts the voice (a voice id, optionally with a `+variant`). */
export async function espeakHasVoice(voice: string): Promise<boolean> {
  const worker = await espeak();
  return worker.set_voice(voice) === 0;
}

/** 16-bit mono samples at 22,050 Hz. */
export async function espeakSynthesize(
  text: string,
  voice: string,
  wordsPerMinute: number | null,
): Promise<Int16Array> {
  const worker = await espeak();
  if (worker.set_voice(voice) !== 0) throw new UnknownVoiceError(voice);
  worker.set_rate(wordsPerMinute ?? 175);
  const chunks: Int16Array[] = [];
  let length = 0;
  // Markup in the text is spoken as text, never interpreted.
  worker.synthesize(text, (samples) => {
    if (samples !== null && samples.length > 0) {
      chunks.push(samples);
      length += samples.length;
    }
  });
  const out = new Int16Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}
