// A voice turn from the dashboard with Chromium's fake microphone playing a WAV of speech (the
// fixture "one two three … ten", spoken by espeak-ng): the offline recogniser (PocketSphinx)
// transcribes it, the fake upstream answers, and espeak-ng speaks the answer back. Skipped, saying
// why, only where Chromium is missing.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { allDialects } from '../support/dialects.js';
import { offlineSpeechModels } from '../support/chat-harness.js';
import {
  browserUnavailableReason,
  describeViolations,
  launchBrowser,
  screenshot,
  seriousViolations,
  startServedApp,
  type ServedApp,
  watchPageProblems,
} from '../support/browser.js';

const unavailable = await browserUnavailableReason();
if (unavailable !== null)
  process.stdout.write(`\n[e2e] voice browser test SKIPPED: ${unavailable}\n`);

/** Chromium's fake microphone plays this file, in a loop, as what the user says. */
const spokenNumbers = fileURLToPath(new URL('../fixtures/audio/numbers.wav', import.meta.url));
const numberWord = String.raw`\b(one|two|three|four|five|six|seven|eight|nine|ten)\b`;
/** Recognisers make mistakes: three of the ten numbers heard, in one line, is a transcription. */
const threeNumbers = new RegExp([numberWord, numberWord, numberWord].join('.*'), 'i');

let served: ServedApp;
let browser: Browser | undefined;
let voiceEnabled = false;

describe.skipIf(unavailable !== null)('a voice turn in Chromium', () => {
  beforeAll(async () => {
    served = await startServedApp(allDialects[0]!, { extraModels: offlineSpeechModels });
    const features = (await (
      await fetch(`${served.origin}/v1/features`, {
        headers: { authorization: `Bearer ${served.adminKey}` },
      })
    ).json()) as { features: { name: string; enabled: boolean }[] };
    voiceEnabled = features.features.some(
      (feature) => feature.name === 'voice_chat' && feature.enabled,
    );
    expect(voiceEnabled, 'voice_chat is enabled with the offline speech models').toBe(true);
    browser = await launchBrowser([
      '--use-fake-device-for-media-stream',
      '--use-fake-ui-for-media-stream',
      `--use-file-for-fake-audio-capture=${spokenNumbers}`,
      '--autoplay-policy=no-user-gesture-required',
    ]);
  });

  afterAll(async () => {
    await browser?.close();
    await served?.close();
  });

  // The turn waits on Chromium, the recogniser, the fake model and eSpeak, each a process or a
  // thread of its own: on a machine two CPU burners slow down it took over 30 s. The time limits
  // below only stop a turn that never comes; what is asserted is what the page shows.
  it('speaks into the fake microphone and gets a transcript and a spoken answer', async () => {
    if (browser === undefined) throw new Error('Chromium did not start');
    const context = await browser.newContext({ permissions: ['microphone'] });
    const page = await context.newPage();
    page.setDefaultTimeout(90_000);
    const problems = watchPageProblems(page);
    try {
      await page.goto(`${served.origin}/`);
      await page.getByLabel('API key').fill(served.adminKey);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      await page.getByRole('link', { name: 'Voice' }).click();
      await page.getByRole('button', { name: 'Start talking' }).click();
      await page.getByTestId('voice-state').getByText('live').waitFor();
      const transcript = page.getByTestId('voice-transcript');
      await transcript
        .locator('[data-who="you"]')
        .filter({ hasText: threeNumbers })
        .first()
        .waitFor();
      await transcript.locator('[data-who="assistant"]').first().waitFor();
      await screenshot(page, 'voice-turn');
      const violations = await seriousViolations(page);
      expect(violations, describeViolations(violations)).toEqual([]);
      await page.getByRole('button', { name: 'Stop' }).click();
    } catch (error) {
      // What the page showed and said when it failed.
      await screenshot(page, 'failed-voice-turn');
      throw new Error(`${String(error)}\npage problems: ${problems.join('\n') || 'none'}`, {
        cause: error,
      });
    } finally {
      await context.close();
    }
  }, 180_000);
});
