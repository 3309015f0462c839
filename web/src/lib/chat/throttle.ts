/**
 * Passes a changing value on at most once every `everyMs`, and always the latest one: a reply's
 * text while it streams. Rendering a reply's Markdown again for every token made a 2,000-token
 * reply cost seconds of the page's time (each render reads the whole reply); ten renders a second
 * look the same to a reader.
 */
export class Throttle<T> {
  private last = -Infinity;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private latest: T;

  constructor(
    first: T,
    private readonly everyMs: number,
    private readonly show: (value: T) => void,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.latest = first;
  }

  /** A new value: shown now if the last one was shown long enough ago, else when that time comes. */
  push(value: T): void {
    this.latest = value;
    if (this.timer !== undefined) return;
    const wait = this.last + this.everyMs - this.now();
    if (wait <= 0) return this.emit();
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.emit();
    }, wait);
  }

  /** Shows `value` at once (the reply is complete), dropping a pending one. */
  flush(value: T): void {
    this.stop();
    this.latest = value;
    this.emit();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private emit(): void {
    this.last = this.now();
    this.show(this.latest);
  }
}
