import { describe, expect, it } from 'vitest';
import { makerOf } from './model-makers.js';

describe('makerOf (the spec’s provider: who made the model)', () => {
  it('prefers the configured maker', () => {
    expect(
      makerOf({ name: 'x', provider: 'openai-compatible', model: 'gpt-4o', maker: 'Acme' }),
    ).toBe('Acme');
  });

  it('names the vendor of a first-party connection', () => {
    expect(makerOf({ name: 'x', provider: 'anthropic', model: 'anything' })).toBe('Anthropic');
    expect(makerOf({ name: 'x', provider: 'google', model: 'anything' })).toBe('Google');
  });

  it('reads the owner of a Hub-style id, mapped to the company where known', () => {
    expect(makerOf({ name: 'x', provider: 'local', source: 'hf:Qwen/Qwen2.5-GGUF/q.gguf' })).toBe(
      'Alibaba',
    );
    expect(makerOf({ name: 'x', provider: 'openai-compatible', model: 'meta-llama/Llama-3' })).toBe(
      'Meta',
    );
    expect(makerOf({ name: 'x', provider: 'openai-compatible', model: 'acme-ai/model-7b' })).toBe(
      'acme-ai',
    );
  });

  it('recognises well-known model families served by anyone, else says unknown', () => {
    expect(
      makerOf({ name: 'x', provider: 'openai-compatible', model: 'llama-3.1-8b-instant' }),
    ).toBe('Meta');
    expect(makerOf({ name: 'x', provider: 'openai-compatible', model: 'qwen2.5:7b' })).toBe(
      'Alibaba',
    );
    expect(makerOf({ name: 'x', provider: 'openai-compatible', model: 'gpt-4o-mini' })).toBe(
      'OpenAI',
    );
    expect(makerOf({ name: 'x', provider: 'openai-compatible', model: 'my-finetune' })).toBe(
      'unknown',
    );
  });
});
