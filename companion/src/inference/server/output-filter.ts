/**
 * What of the server's streamed output a client sees: text, but not a tool call (from its trigger
 * on) nor a hidden segment, and not the start of either while it is still uncertain (a chunk
 * ending in `||ca` is held until the next one shows whether `||call:` follows). A thought span's
 * text goes to its own sink (the request's `onReasoning`) instead of being dropped.
 */
export interface HiddenSpan {
  open: string;
  close: string;
  /** The model starts inside the span (the template opened it, or the engine did). */
  openAtStart?: boolean;
  /** The format's thought segment: its text is the model's reasoning. */
  thought?: boolean;
}

export class OutputFilter {
  private pending = '';
  private state: { mode: 'text' } | { mode: 'hidden'; close: string; thought: boolean } | { mode: 'call' } = { mode: 'text' };

  constructor(
    private readonly triggers: string[],
    private readonly hidden: HiddenSpan[],
    private readonly emit: (text: string) => void,
    private readonly emitThought: (text: string) => void = () => {},
  ) {
    const first = hidden.find((span) => span.openAtStart);
    if (first) this.state = { mode: 'hidden', close: first.close, thought: first.thought === true };
  }

  /** Whether a tool call has started. */
  get calling(): boolean {
    return this.state.mode === 'call';
  }

  /** Whether the output is inside the thought now. */
  get thinking(): boolean {
    return this.state.mode === 'hidden' && this.state.thought;
  }

  push(delta: string): void {
    this.pending += delta;
    for (;;) {
      const state = this.state;
      if (state.mode === 'call') {
        this.pending = '';
        return;
      }
      if (state.mode === 'hidden') {
        const end = this.pending.indexOf(state.close);
        if (end < 0) {
          const keep = uncertainTail(this.pending, [state.close]);
          if (state.thought) this.sendThought(this.pending.slice(0, this.pending.length - keep));
          this.pending = this.pending.slice(this.pending.length - keep);
          return;
        }
        if (state.thought) this.sendThought(this.pending.slice(0, end));
        this.pending = this.pending.slice(end + state.close.length);
        this.state = { mode: 'text' };
        continue;
      }
      const next = this.nextMark();
      if (!next) {
        const keep = this.uncertainTail();
        this.send(this.pending.slice(0, this.pending.length - keep));
        this.pending = this.pending.slice(this.pending.length - keep);
        return;
      }
      this.send(this.pending.slice(0, next.index));
      this.pending = this.pending.slice(next.index + next.mark.length);
      this.state = next.close === undefined ? { mode: 'call' } : { mode: 'hidden', close: next.close, thought: next.thought === true };
    }
  }

  /** The output ended: text held back for being uncertain is text after all. */
  finish(): void {
    if (this.state.mode === 'text') this.send(this.pending);
    if (this.thinking) this.sendThought(this.pending);
    this.pending = '';
  }

  private send(text: string): void {
    if (text) this.emit(text);
  }

  private sendThought(text: string): void {
    if (text) this.emitThought(text);
  }

  private marks(): { mark: string; close?: string; thought?: boolean }[] {
    return [...this.triggers.map((mark) => ({ mark })), ...this.hidden.map((span) => ({ mark: span.open, close: span.close, thought: span.thought }))].filter(
      (entry) => entry.mark,
    );
  }

  private nextMark(): { index: number; mark: string; close?: string; thought?: boolean } | undefined {
    let best: { index: number; mark: string; close?: string; thought?: boolean } | undefined;
    for (const entry of this.marks()) {
      const index = this.pending.indexOf(entry.mark);
      if (index >= 0 && (!best || index < best.index)) best = { index, ...entry };
    }
    return best;
  }

  private uncertainTail(): number {
    return uncertainTail(
      this.pending,
      this.marks().map((entry) => entry.mark),
    );
  }
}

/** The longest end of `text` that could begin one of `marks`. */
function uncertainTail(text: string, marks: string[]): number {
  let keep = 0;
  for (const mark of marks) {
    for (let length = Math.min(mark.length - 1, text.length); length > keep; length--) {
      if (text.endsWith(mark.slice(0, length))) {
        keep = length;
        break;
      }
    }
  }
  return keep;
}

/** The text without its hidden spans (a span left open runs to the end). */
export function withoutHidden(text: string, hidden: HiddenSpan[]): string {
  let out = '';
  let rest = text;
  const startsHidden = hidden.find((span) => span.openAtStart);
  if (startsHidden) {
    const end = rest.indexOf(startsHidden.close);
    if (end < 0) return '';
    rest = rest.slice(end + startsHidden.close.length);
  }
  for (;;) {
    let first: { index: number; span: HiddenSpan } | undefined;
    for (const span of hidden) {
      const index = span.open ? rest.indexOf(span.open) : -1;
      if (index >= 0 && (!first || index < first.index)) first = { index, span };
    }
    if (!first) return out + rest;
    out += rest.slice(0, first.index);
    const after = rest.slice(first.index + first.span.open.length);
    const end = after.indexOf(first.span.close);
    if (end < 0) return out;
    rest = after.slice(end + first.span.close.length);
  }
}
