// The bytes of an answer as they are read: copied chunk by chunk into blocks of their own, so that
// a large answer is never copied whole on the event loop (a 30 MB copy holds it for ~20 ms) and
// its blocks can be moved to a worker thread; and where the events of an event stream end.

const firstBlockBytes = 64 * 1024;
const blockBytes = 1024 * 1024;

/** Bytes gathered in blocks that own their memory (each can be transferred). */
export class ByteBlocks {
  private readonly full: Uint8Array[] = [];
  private current: Uint8Array | null = null;
  private used = 0;
  /** Bytes gathered so far. */
  bytes = 0;

  push(chunk: Uint8Array): void {
    let offset = 0;
    while (offset < chunk.byteLength) {
      if (this.current === null || this.used === this.current.byteLength) {
        if (this.current !== null) this.full.push(this.current);
        this.current = new Uint8Array(this.full.length === 0 ? firstBlockBytes : blockBytes);
        this.used = 0;
      }
      const taken = Math.min(chunk.byteLength - offset, this.current.byteLength - this.used);
      this.current.set(chunk.subarray(offset, offset + taken), this.used);
      this.used += taken;
      offset += taken;
    }
    this.bytes += chunk.byteLength;
  }

  /** The bytes gathered, in order (views of the blocks; the last one trimmed). */
  parts(): Uint8Array[] {
    if (this.current === null) return [...this.full];
    return [...this.full, this.current.subarray(0, this.used)];
  }

  /** Hands the gathered bytes over and starts empty. */
  take(): Uint8Array[] {
    const parts = this.parts();
    this.full.length = 0;
    this.current = null;
    this.used = 0;
    this.bytes = 0;
    return parts;
  }
}

/**
 * Finds where events end in an event stream's bytes: after a blank line, that is a line ending
 * (CRLF, LF or CR) directly after another. Kept across chunks.
 */
export class EventBoundaries {
  private previous = 0;
  private atLineStart = true;

  /** The offsets just past each event's end within `chunk`. */
  ends(chunk: Uint8Array): number[] {
    const ends: number[] = [];
    for (let index = 0; index < chunk.length; index += 1) {
      const byte = chunk[index]!;
      if (byte === 10 && this.previous === 13) {
        // The second half of a CRLF: the line ending was counted at the CR.
      } else if (byte === 10 || byte === 13) {
        if (this.atLineStart) ends.push(index + 1);
        this.atLineStart = true;
      } else {
        this.atLineStart = false;
      }
      this.previous = byte;
    }
    return ends;
  }
}
