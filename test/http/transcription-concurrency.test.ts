// The first transcriptions of a fresh service, twice as many at once as it runs recognisers, all
// answer with the right text (issue 18): PocketSphinx's pipe is written only once the recogniser
// has opened it, and utterances beyond the process limit wait their turn instead of failing after
// a minute.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import {
  offlineSpeechModels,
  startChatHarness,
  type ChatHarness,
} from '../support/chat-harness.js';
import { allDialects } from '../support/dialects.js';
import { bearer } from '../support/test-app.js';

const wav = readFileSync(new URL('../fixtures/audio/numbers.wav', import.meta.url)).toString(
  'base64',
);
const numbers = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];
const heard = (text: string) => {
  const words = new Set(text.toLowerCase().split(/\W+/));
  return numbers.filter((word) => words.has(word)).length;
};

describe.each(allDialects)('PocketSphinx on a fresh service ($name)', (dialect) => {
  let harness: ChatHarness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  const transcribe = async (service: ChatHarness) => {
    const response = await service.app.inject({
      method: 'POST',
      url: '/v1/speech/transcribe',
      headers: bearer(service.adminKey),
      payload: { audio: wav, config: { language_code: 'en-US' } },
    });
    return { status: response.statusCode, body: response.json<{ text?: string }>() };
  };

  // Four at once with two recognisers (it was ten): as many wait for a recogniser as run, which is
  // what the limit's queue must handle, at less than half the recognisers' CPU.
  it('answers four at once as the very first requests of a fresh service, each with the right text', async () => {
    harness = await startChatHarness({
      dialect,
      extraModels: offlineSpeechModels,
      // Two recognisers at a time: the other two utterances wait for one.
      overrides: { speech: { transcription_processes: 2 } },
    });
    const service = harness;
    const four = await Promise.all(Array.from({ length: 4 }, () => transcribe(service)));
    expect(four.map((answer) => answer.status)).toEqual(Array(4).fill(200));
    expect(heard(four[0]!.body.text ?? '')).toBeGreaterThanOrEqual(6);
    // The decoder is deterministic: the same clip gives the same text, whatever ran beside it.
    expect(new Set(four.map((answer) => answer.body.text)).size).toBe(1);
  }, 180_000);
});
