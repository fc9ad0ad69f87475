// The lines of a Server-Sent Events stream as its pieces arrive (LF or CR LF ends), for the lean
// clients' stream readers (OpenAI's chunks, Anthropic's events): an unfinished line waits for the
// next piece, is looked at only where new text arrived (no rescan of a long line), and is refused
// past `maxStreamLineChars` instead of growing without bound; and the data of the events they make.
import { JSONParseError } from '@ai-sdk/provider';

/** Longest line of a stream kept while waiting for its end. */
export const maxStreamLineChars = 1024 * 1024;

export class SseLines {
  private rest = '';

  /**
   * Hands each line the piece completes to `line`, while `more()` says to go on; keeps the
   * unfinished one. Throws (as the AI SDK's JSONParseError) on a line past the bound.
   */
  split(piece: string, line: (text: string) => void, more: () => boolean = () => true): void {
    const received = this.rest + piece;
    let start = 0;
    for (
      let end = received.indexOf('\n', this.rest.length);
      end !== -1 && more();
      end = received.indexOf('\n', start)
    ) {
      line(
        end > start && received.charCodeAt(end - 1) === 13
          ? received.slice(start, end - 1)
          : received.slice(start, end),
      );
      start = end + 1;
    }
    this.rest = received.slice(start);
    if (this.rest.length > maxStreamLineChars) {
      throw new JSONParseError({
        text: this.rest.slice(0, 200),
        cause: new Error(`A line of the stream is longer than ${maxStreamLineChars} characters.`),
      });
    }
  }

  /** The stream ended: its unfinished last line, if any, then the blank line ending its event. */
  end(line: (text: string) => void): void {
    if (this.rest !== '') line(this.rest);
    this.rest = '';
    line('');
  }
}

/** The data of a stream's events, line by line: `data:` lines gather, a blank line ends an event. */
export class SseData {
  /** Text of the `data:` lines of the event being read. */
  private data: string | null = null;

  /** The data of the event this line ends (null: it ends none, or that event had no data). */
  line(line: string): string | null {
    if (line === '') {
      const data = this.data;
      this.data = null;
      return data;
    }
    if (line.startsWith('data:')) {
      const value = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
      this.data = this.data === null ? value : `${this.data}\n${value}`;
    }
    return null;
  }
}
