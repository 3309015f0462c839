/**
 * Counts failed authentications per client address in a sliding window. Past the allowance,
 * the address is told to wait (429 with Retry-After) until its oldest failure ages out, which
 * makes guessing keys slow without locking anyone out for long.
 */
export class FailureLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly allowance = 5,
    private readonly windowMs = 60_000,
  ) {}

  /** Seconds the address must wait before trying again, or 0. */
  waitSeconds(address: string, now = Date.now()): number {
    const recent = this.recent(address, now);
    if (recent.length < this.allowance) return 0;
    return Math.max(1, Math.ceil((recent[0]! + this.windowMs - now) / 1000));
  }

  record(address: string, now = Date.now()): void {
    const recent = this.recent(address, now);
    recent.push(now);
    this.failures.set(address, recent);
    if (this.failures.size > 10_000) this.failures.delete(this.failures.keys().next().value!);
  }

  private recent(address: string, now: number): number[] {
    return (this.failures.get(address) ?? []).filter((at) => now - at < this.windowMs);
  }
}
