// The translation for the AI SDK's providers driven by their tables (./provider-parameters.ts):
// each parameter mapped where the provider takes it and refused, naming it, where it does not;
// a parameter no table lists ignored; the SDK's warnings turned into the same refusal.
import { describe, expect, it } from 'vitest';
import { InvalidParameterError } from '../../errors/app-error.js';
import type { ChatParams, GenerationRequest } from '../spec.js';
import type { TranslationTarget } from './ai-sdk-target.js';
import { refusalOfWarnings, toCallOptions } from './ai-sdk-translation.js';
import type { AiSdkProvider } from './provider-parameters.js';

function target(provider: AiSdkProvider, modelId = `${provider}-model`): TranslationTarget {
  return { provider, modelId, modelName: `${provider}-fake`, supportedUrls: {} };
}

function request(params: ChatParams, temperature?: number): GenerationRequest {
  return {
    messages: [{ role: 'user', content: 'Hello' }],
    maxTokens: 50,
    ...(temperature === undefined ? {} : { temperature }),
    signal: new AbortController().signal,
    fairnessKey: 'acct_test',
    params,
  };
}

async function refusal(pending: Promise<unknown>): Promise<InvalidParameterError> {
  const error = await pending.then(
    () => new Error('expected a refusal'),
    (caught: unknown) => caught,
  );
  if (error instanceof InvalidParameterError) return error;
  throw error;
}

describe('the AI SDK translation', () => {
  it('maps what each provider takes to its call options and provider options', async () => {
    const params: ChatParams = {
      top_p: 0.5,
      stop: 'END',
      seed: 7,
      parallel_tool_calls: false,
      reasoning_effort: 'low',
    };
    const google = await toCallOptions(request(params, 0.2), target('google', 'gemini-2.5-flash'));
    expect(google).toMatchObject({
      temperature: 0.2,
      topP: 0.5,
      stopSequences: ['END'],
      seed: 7,
      providerOptions: { google: { thinkingConfig: { thinkingBudget: 1024 } } },
    });
    const { seed: _seed, ...withoutSeed } = params;
    const anthropic = await toCallOptions(request(withoutSeed, 0.2), target('anthropic'));
    expect(anthropic).toMatchObject({
      temperature: 0.2,
      topP: 0.5,
      stopSequences: ['END'],
      providerOptions: { anthropic: { disableParallelToolUse: true, effort: 'low' } },
    });
    expect(anthropic).not.toHaveProperty('seed');
  });

  it('ignores parameters no table lists', async () => {
    const options = await toCallOptions(
      request({ user: 'u1', metadata: { a: 'b' }, store: true, service_tier: 'auto' }),
      target('anthropic'),
    );
    expect(options).not.toHaveProperty('providerOptions');
    expect(Object.keys(options).sort()).toEqual(['maxOutputTokens', 'prompt']);
  });

  it('refuses, naming it, what a provider cannot honour, in the order of its table', async () => {
    const seed = await refusal(toCallOptions(request({ seed: 1 }), target('anthropic')));
    expect(seed.param).toBe('seed');
    expect(seed.message).toBe(
      "Model 'anthropic-fake' (Anthropic) cannot honour 'seed': Anthropic has no sampling seed.",
    );
    const first = await refusal(
      toCallOptions(request({ presence_penalty: 1, n: 2 }, 1.5), target('anthropic')),
    );
    expect(first.param).toBe('temperature');
    const penalty = await refusal(
      toCallOptions(request({ frequency_penalty: 1 }), target('google', 'gemini-2.5-pro')),
    );
    expect(penalty.param).toBe('frequency_penalty');
    await expect(
      toCallOptions(request({ frequency_penalty: 1 }), target('google', 'gemini-2.0-flash')),
    ).resolves.toMatchObject({ frequencyPenalty: 1 });
  });
});

describe('the AI SDK translation, refusals', () => {
  it('refuses a reasoning effort that names an object property rather than a level', async () => {
    for (const [provider, modelId] of [
      ['google', 'gemini-2.5-flash'],
      ['google', 'gemini-3-pro'],
      ['anthropic', 'claude'],
    ] as const) {
      for (const effort of ['constructor', 'toString', '__proto__']) {
        const error = await refusal(
          toCallOptions(request({ reasoning_effort: effort }), target(provider, modelId)),
        );
        expect(error.param).toBe('reasoning_effort');
      }
    }
  });

  it('turns the SDK’s warning that it dropped a parameter the client set into a refusal', () => {
    const set = request({ top_p: 0.5, response_format: { type: 'json_object' } });
    const warned = refusalOfWarnings(
      [{ type: 'unsupported', feature: 'topP', details: 'not with temperature' }],
      set,
      target('anthropic'),
    );
    expect(warned?.param).toBe('top_p');
    expect(warned?.message).toBe(
      "Model 'anthropic-fake' (Anthropic) cannot honour 'top_p' (not with temperature).",
    );
    // Not set by the client, or a warning the table does not tie to a parameter: no refusal.
    expect(
      refusalOfWarnings([{ type: 'unsupported', feature: 'seed' }], set, target('google')),
    ).toBeNull();
    expect(
      refusalOfWarnings([{ type: 'unsupported', feature: 'temperature' }], set, target('google')),
    ).toBeNull();
    expect(
      refusalOfWarnings([{ type: 'unsupported', feature: 'responseFormat' }], set, target('google'))
        ?.param,
    ).toBe('response_format');
  });
});
