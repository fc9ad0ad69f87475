// Sentences of a text that arrives in pieces (a model's streamed answer), released as soon as each
// is certainly complete — when text follows it — so each can be spoken while the model still writes.
import { splitSentences } from './sentences.js';

export class SentenceStream {
  private buffer = '';

  /** Adds text; returns the sentences it completed (whitespace collapsed, list markers out). */
  push(text: string): string[] {
    this.buffer += text;
    const sentences = splitSentences(this.buffer);
    if (sentences.length < 2) return [];
    // The last sentence may still grow; keep it, and the space after it if the text ended on one.
    const rest = sentences[sentences.length - 1]!;
    this.buffer = /\s$/.test(this.buffer) ? `${rest} ` : rest;
    return sentences.slice(0, -1);
  }

  /** The rest, once the text has ended. */
  flush(): string[] {
    const rest = splitSentences(this.buffer);
    this.buffer = '';
    return rest;
  }
}
