import { describe, expect, it } from 'vitest';
import { FailureLimiter } from './failure-limiter';

describe('FailureLimiter', () => {
  it('refuses a client after the limit of failures in a minute, and lets it in again a minute later', () => {
    let t = 0;
    const limiter = new FailureLimiter(3, () => t);
    for (let i = 0; i < 3; i++) {
      expect(limiter.retryAfter('1.2.3.4')).toBe(0);
      limiter.fail('1.2.3.4');
      t += 1_000;
    }
    expect(limiter.retryAfter('1.2.3.4')).toBe(57);
    expect(limiter.retryAfter('5.6.7.8')).toBe(0);
    t = 60_001;
    expect(limiter.retryAfter('1.2.3.4')).toBe(0);
  });
});
