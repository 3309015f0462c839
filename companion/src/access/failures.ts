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

/**
 * The client a failure counts against: an IPv4 address (IPv4-mapped IPv6 included) as itself, an
 * IPv6 address by its /64 (one machine or home network is usually handed a whole /64, so counting
 * single addresses there would count nothing).
 */
export function clientOf(address: string | undefined): string {
  if (!address) return 'unknown';
  const plain = address.toLowerCase().replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
  if (!plain.includes(':')) return plain;
  const [head = '', tail = ''] = plain.split('%')[0]!.split('::');
  const front = head ? head.split(':') : [];
  const back = plain.includes('::') && tail ? tail.split(':') : [];
  const groups = plain.includes('::') ? [...front, ...Array<string>(Math.max(0, 8 - front.length - back.length)).fill('0'), ...back] : front;
  return `${groups
    .slice(0, 4)
    .map((group) => (Number.parseInt(group, 16) || 0).toString(16))
    .join(':')}::/64`;
}
