// The audio worker threads as the service drives them: the preload's warm-up (`speech.preload`)
// is a task the threads know, and synthesis answers with and without it.
import { afterAll, describe, expect, it } from 'vitest';
import { AudioPool } from './audio-pool.js';
import { espeakSampleRate } from './espeak.js';

const hello = { text: 'Hello there.', voice: 'en-us', wordsPerMinute: null };

describe('the audio worker threads', () => {
  const pools: AudioPool[] = [];
  const pool = () => {
    const created = new AudioPool({ threads: 1, maxQueue: 8 });
    pools.push(created);
    return created;
  };
  afterAll(async () => {
    await Promise.all(pools.map((created) => created.close()));
  });

  it('speaks on first use, eSpeak NG loaded by the synthesis itself', async () => {
    const speech = await pool().synthesize(hello);
    expect(speech.sampleRate).toBe(espeakSampleRate);
    // Over a tenth of a second of sound for two words.
    expect(speech.samples.length).toBeGreaterThan(espeakSampleRate / 10);
  });

  it('warms eSpeak NG up in every thread when preloaded, then speaks as a cold one does', async () => {
    const warmed = pool();
    await expect(warmed.warmUp()).resolves.toBeUndefined();
    const cold = await pool().synthesize(hello);
    const speech = await warmed.synthesize(hello);
    // eSpeak keeps some state between syntheses (a warmed thread's sentence came out 11 samples
    // longer in 15,755): the same speech, not the same samples.
    expect(speech.sampleRate).toBe(espeakSampleRate);
    expect(Math.abs(speech.samples.length - cold.samples.length)).toBeLessThan(
      cold.samples.length / 20,
    );
    await expect(
      warmed.synthesize({ text: 'Hello.', voice: 'no-such-voice', wordsPerMinute: null }),
    ).rejects.toMatchObject({ code: 'invalid_parameter' });
  });
});
