// Complexity signals of a message (what the balanced routing strategy weighs).
import { describe, expect, it } from 'vitest';
import { assessComplexity } from './complexity.js';

describe('assessComplexity', () => {
  it('rates by documented signals', () => {
    expect(assessComplexity('hi', 0).level).toBe('simple');
    expect(assessComplexity('What is the capital of France, and why was it chosen?', 0).level).toBe(
      'simple',
    );
    const moderate = assessComplexity(
      'Explain step by step how to set up a VPN on a laptop, it must work with two-factor login and should not need admin rights.',
      0,
    );
    expect(moderate.level).toBe('moderate');
    expect(moderate.signals.constraints).toBeGreaterThanOrEqual(2);
    const code = assessComplexity(
      'Why does this fail?\n```js\nconst x = await fetch(url);\n```\nCompare it with axios and explain the trade-offs in detail. Which one is faster?',
      1,
    );
    expect(code.signals.has_code).toBe(true);
    expect(code.level).toBe('complex');
  });
});
