// Abuse limits on widget deal creation. The public key is public, so anyone can call it: cap creations per key and
// per client address with a sliding window. In-process memory, which is exact on one machine; several instances
// each keep their own window (so the effective limit multiplies by the instance count).
import { Problem } from '../http/problem.ts';

const MAX_TRACKED = 100_000;

export class SlidingWindow {
  private readonly hits = new Map<string, number[]>();

  constructor(
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  /** Counts a hit for `key`; returns 0 when allowed, else the milliseconds until the oldest hit leaves the window. */
  hit(key: string, now = Date.now()): number {
    const since = now - this.windowMs;
    const times = (this.hits.get(key) ?? []).filter((time) => time > since);
    if (times.length >= this.limit) {
      this.hits.set(key, times);
      return times[0]! + this.windowMs - now;
    }
    times.push(now);
    this.hits.set(key, times);
    if (this.hits.size > MAX_TRACKED) this.sweep(since);
    return 0;
  }

  /** Forgets keys with no hit in the window, so memory follows current traffic only. */
  private sweep(since: number): void {
    for (const [key, times] of this.hits) if ((times.at(-1) ?? 0) <= since) this.hits.delete(key);
    if (this.hits.size > MAX_TRACKED) this.hits.clear(); // a flood of distinct keys: start over rather than grow
  }
}

export function rateLimited(waitMs: number, what: string): Problem {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return new Problem(429, 'rate_limited', `Too many widget deal creations ${what}; retry in ${seconds} s.`, {
    headers: { 'Retry-After': String(seconds) },
  });
}
