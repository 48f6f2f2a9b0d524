import { describe, expect, it } from 'vitest';
import { PlanCatalog } from '../plans/plan-catalog';
import { lowBalanceThreshold, quotaExceeded } from './admission-checks';

const catalog = PlanCatalog.fromFile('config/plans.json');

describe('lowBalanceThreshold', () => {
  it('is a tenth of the period allowance, at least 1 credit', () => {
    expect(lowBalanceThreshold(catalog.plan('free'))).toBe(5_000_000n);
    expect(lowBalanceThreshold(catalog.plan('team'))).toBe(50_000_000n);
    expect(lowBalanceThreshold(catalog.plan('enterprise'))).toBe(1_000_000n);
    expect(lowBalanceThreshold(catalog.effective('enterprise', { includedCredits: '5.000000' }))).toBe(1_000_000n);
  });
});

describe('quotaExceeded', () => {
  it('is DL_BILLING_QUOTA_EXCEEDED (429) with the quota and, where it resets, resetsAt', () => {
    const runs = quotaExceeded('runs', 'all used', 500, 500, new Date('2027-01-01T00:00:00Z'));
    expect(runs.status).toBe(429);
    expect(runs.toBody()).toEqual({ error: { code: 'DL_BILLING_QUOTA_EXCEEDED', message: 'all used', quota: 'runs', limit: 500, used: 500, resetsAt: '2027-01-01T00:00:00.000Z' } });
    expect(quotaExceeded('concurrency', 'busy', 2, 2, null).toBody().error).not.toHaveProperty('resetsAt');
  });
});
