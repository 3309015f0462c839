/**
 * Splitting a byte stream (an event stream) into lines without ever searching a byte twice: each
 * new chunk is searched for its last line end only, and a line not yet ended is kept as the pieces
 * it came in, joined once when it ends. A stream that never sends a line end so costs time in
 * proportion to its length, and the line may not grow past a limit.
 */

/** The longest line an event stream may send (a Responses `response.completed` event carries the whole answer on one line). */
export const MAX_LINE_BYTES = 32 * 1024 * 1024;

const NEWLINE = 0x0a;

/** A line grew past the limit without ending. */
export class LineTooLong extends Error {
  constructor(readonly limit: number) {
    super(`it sent a line longer than ${inWords(limit)} without ending it`);
    this.name = 'LineTooLong';
  }
}

export class LineBuffer {
  private held: Uint8Array[] = [];
  private heldBytes = 0;
  /** Bytes searched for a line end so far: each byte received at most once. */
  scanned = 0;

  constructor(readonly limit = MAX_LINE_BYTES) {}

  /**
   * Takes the next chunk: the bytes of the lines it completes (what was held before them
   * included, ending with a line end), or undefined when it ends none. Throws LineTooLong when the
   * line not yet ended passes the limit.
   */
  push(chunk: Uint8Array): Uint8Array | undefined {
    const end = chunk.lastIndexOf(NEWLINE);
    this.scanned += end < 0 ? chunk.length : chunk.length - end;
    if (end < 0) {
      this.hold(chunk);
      return undefined;
    }
    const ended = chunk.subarray(0, end + 1);
    const complete = this.held.length === 0 ? ended : join([...this.held, ended], this.heldBytes + ended.length);
    this.held = [];
    this.heldBytes = 0;
    if (end + 1 < chunk.length) this.hold(chunk.subarray(end + 1));
    return complete;
  }

  /** What is held at the end of the stream: a last line without its line end (empty when none). */
  rest(): Uint8Array {
    const rest = join(this.held, this.heldBytes);
    this.held = [];
    this.heldBytes = 0;
    return rest;
  }

  private hold(piece: Uint8Array): void {
    this.heldBytes += piece.length;
    if (this.heldBytes > this.limit) throw new LineTooLong(this.limit);
    // A copy: the producer may reuse its buffer, and a small rest should not keep a large chunk alive.
    this.held.push(piece.slice());
  }
}

function join(pieces: Uint8Array[], size: number): Uint8Array {
  if (pieces.length === 1) return pieces[0]!;
  const joined = new Uint8Array(size);
  let at = 0;
  for (const piece of pieces) {
    joined.set(piece, at);
    at += piece.length;
  }
  return joined;
}

/** A byte count as people read it: 32 MiB, 64 KB. */
export function inWords(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KB`;
  return `${bytes} bytes`;
}
