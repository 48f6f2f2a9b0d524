/**
 * Counts failed authentications per client address in a sliding minute; past the limit the client
 * is refused (429) until the minute has passed, whatever key it presents. Kept per instance: a
 * brute force spread over instances is slowed by each.
 */
export class FailureLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly limitPerMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds until the client may try again, or 0 when it may now. */
  retryAfter(client: string): number {
    const recent = this.recent(client);
    if (recent.length < this.limitPerMinute) return 0;
    return Math.max(1, Math.ceil((recent[0]! + 60_000 - this.now()) / 1000));
  }

  fail(client: string): void {
    const recent = this.recent(client);
    recent.push(this.now());
    this.failures.set(client, recent);
    if (this.failures.size > 100_000) this.failures.clear();
  }

  private recent(client: string): number[] {
    const since = this.now() - 60_000;
    return (this.failures.get(client) ?? []).filter((t) => t > since);
  }
}
