// The router index: examples added online score like a fresh build, later examples replace earlier
// ones with the same key, and an unrelated message scores low.
import { describe, expect, it } from 'vitest';
import { RouterIndex } from './router-index.js';

const examples = [
  { key: 'a1', route: 'billing', text: 'I was charged twice on my invoice' },
  { key: 'a2', route: 'billing', text: 'why is my bill so high this month' },
  { key: 'a3', route: 'billing', text: 'send me a copy of my last invoice' },
  { key: 'b1', route: 'travel', text: 'book a flight to berlin on monday' },
  { key: 'b2', route: 'travel', text: 'I need a hotel room in madrid' },
  { key: 'b3', route: 'travel', text: 'reserve a rental car at the airport' },
];

describe('RouterIndex', () => {
  it('routes paraphrases to the route they resemble', async () => {
    const index = await RouterIndex.build(examples);
    expect(index.score('there is a double charge on my invoice')[0]?.route).toBe('billing');
    expect(index.score('find me a flight to rome')[0]?.route).toBe('travel');
  });

  it('gives the same scores whether examples were added online or built at once', async () => {
    const built = await RouterIndex.build(examples);
    const online = await RouterIndex.build(examples.slice(0, 4));
    // Same IDF statistics for both: rebuild the online one's statistics from the same first four.
    const reference = await RouterIndex.build(examples.slice(0, 4));
    for (const example of examples.slice(4)) {
      online.add(example);
      reference.add(example);
    }
    const query = 'a hotel room for two nights';
    expect(online.score(query)).toEqual(reference.score(query));
    expect(online.score(query)[0]?.route).toBe(built.score(query)[0]?.route);
  });

  it('replaces an example taught again under the same key', async () => {
    const index = await RouterIndex.build(examples);
    index.add({ key: 'a1', route: 'travel', text: 'I was charged twice on my invoice' });
    expect(index.size).toBe(examples.length);
    expect(index.routes().get('billing')).toBe(2);
    expect(index.routes().get('travel')).toBe(4);
  });

  it('scores an unrelated message far below a related one', async () => {
    const index = await RouterIndex.build(examples);
    const related = index.score('charged twice on the invoice')[0]!.score;
    const unrelated = index.score('photosynthesis in green plants')[0]?.score ?? 0;
    expect(unrelated).toBeLessThan(related / 2);
  });
});
