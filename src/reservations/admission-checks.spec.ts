import { describe, expect, it } from 'vitest';
import { BillingException } from 'src/common/errors/billing.exception';
import { lowBalanceThreshold } from 'src/plans/notifications';
import type { PlanAccount } from 'src/plans/plan-accounts';
import { PlanCatalog } from 'src/plan-catalog/plan-catalog';
import { calendarMonth } from 'src/plan-catalog/periods';
import type { Environment } from 'src/pricing/environment';
import type { LimitRow } from 'src/spend-limits/spend-limit-reads';
import {
  accountActive,
  accountExists,
  agentsQuota,
  concurrencyQuota,
  exhaustedNotices,
  lowBalanceNotice,
  notEnded,
  ownRuntime,
  planAllows,
  quotaExceeded,
  runsQuota,
  runsRemaining,
  spendLimit,
} from './admission';

const catalog = PlanCatalog.fromFile('config/plans.json');
const free = catalog.plan('free');
const period = calendarMonth(new Date('2026-12-04T12:00:00Z'));
const account: PlanAccount = { id: 'acc_1', plan: 'free', status: 'active', overrides: null, billingCycleAnchor: null };
const small = { name: 'python', sizeClass: 'small' } as Environment;

/** The error a check throws (its contract body), or null when it passes. */
function refusal(check: () => unknown): Record<string, unknown> | null {
  try {
    check();
    return null;
  } catch (error) {
    if (!(error instanceof BillingException)) throw error;
    return { status: error.status, ...error.toBody().error };
  }
}

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
    expect(runs.toBody()).toEqual({
      error: {
        code: 'DL_BILLING_QUOTA_EXCEEDED',
        message: 'all used',
        quota: 'runs',
        limit: 500,
        used: 500,
        resetsAt: '2027-01-01T00:00:00.000Z',
      },
    });
    expect(quotaExceeded('concurrency', 'busy', 2, 2, null).toBody().error).not.toHaveProperty('resetsAt');
  });
});

describe('the launch checks, each on what was read', () => {
  it('notEnded: a runtime its events ended before any reservation is a 409; one reserved, or not ended, passes', () => {
    expect(refusal(() => notEnded('rt_1', undefined))).toBeNull();
    expect(refusal(() => notEnded('rt_1', { account: 'acc_1', reserved: false, ended: false }))).toBeNull();
    expect(refusal(() => notEnded('rt_1', { account: 'acc_1', reserved: true, ended: true }))).toBeNull();
    expect(refusal(() => notEnded('rt_1', { account: 'acc_1', reserved: false, ended: true }))).toMatchObject({
      status: 409,
      code: 'DL_BILLING_IDEMPOTENCY_CONFLICT',
      findings: [{ field: 'runtimeId' }],
    });
  });

  it('ownRuntime: a runtime made known by another account’s events is a 409', () => {
    expect(refusal(() => ownRuntime('rt_1', 'acc_1', null))).toBeNull();
    expect(refusal(() => ownRuntime('rt_1', 'acc_1', 'acc_1'))).toBeNull();
    expect(refusal(() => ownRuntime('rt_1', 'acc_1', 'acc_2'))).toMatchObject({ status: 409, code: 'DL_BILLING_IDEMPOTENCY_CONFLICT' });
  });

  it('accountExists: no account is a 404; accountActive: a suspended one is a 403', () => {
    expect(refusal(() => accountExists('acc_9', undefined))).toMatchObject({ status: 404, code: 'DL_BILLING_NOT_FOUND' });
    expect(accountExists('acc_1', account)).toBe(account);
    expect(refusal(() => accountActive(account))).toBeNull();
    expect(refusal(() => accountActive({ ...account, status: 'suspended' }))).toMatchObject({
      status: 403,
      code: 'DL_BILLING_ACCOUNT_SUSPENDED',
    });
  });

  it('planAllows: a size class or a GPU outside the plan is DL_BILLING_PLAN_FORBIDS with the fields', () => {
    expect(refusal(() => planAllows(free, small))).toBeNull();
    const refused = refusal(() => planAllows(free, { name: 'python', sizeClass: 'large' } as Environment));
    expect(refused).toMatchObject({ status: 403, code: 'DL_BILLING_PLAN_FORBIDS' });
    expect(refused!.findings).toEqual([expect.objectContaining({ field: 'environment.sizeClass' })]);
  });

  it('runsQuota, agentsQuota, concurrencyQuota: at their limit they refuse with the quota, limit, used and reset', () => {
    const usage = { runs: 0, agents: 0, agentSeen: false, active: 0 };
    expect(refusal(() => runsQuota(free, period, usage))).toBeNull();
    expect(refusal(() => runsQuota(free, period, { ...usage, runs: 500 }))).toMatchObject({
      status: 429,
      quota: 'runs',
      limit: 500,
      used: 500,
      resetsAt: period.end.toISOString(),
    });
    expect(refusal(() => agentsQuota(free, period, 'ag_4', { ...usage, agents: 3 }))).toMatchObject({ quota: 'agents', limit: 3, used: 3 });
    // An agent already among the period's may launch again; a launch without an agent is not one more.
    expect(refusal(() => agentsQuota(free, period, 'ag_1', { ...usage, agents: 3, agentSeen: true }))).toBeNull();
    expect(refusal(() => agentsQuota(free, period, null, { ...usage, agents: 3 }))).toBeNull();
    const busy = refusal(() => concurrencyQuota(free, { ...usage, active: 2 }));
    expect(busy).toMatchObject({ quota: 'concurrency', limit: 2, used: 2 });
    expect(busy).not.toHaveProperty('resetsAt');
    expect(refusal(() => concurrencyQuota(catalog.plan('enterprise'), { ...usage, active: 10_000 }))).toBeNull();
  });

  it('spendLimit: passing the cap is a 402 with what remains, what is spent and held, and the scope', () => {
    const limit: LimitRow = {
      id: 'sl_1',
      account_id: 'acc_1',
      scope_user_id: 'u_1',
      period: 'month',
      limit_micros: '10000000',
      thresholds: [],
    };
    expect(refusal(() => spendLimit(limit, { charged: 4_000_000n, held: 1_000_000n }, 5_000_000n, period))).toBeNull();
    expect(refusal(() => spendLimit(limit, { charged: 4_000_000n, held: 1_000_000n }, 5_000_001n, period))).toMatchObject({
      status: 402,
      code: 'DL_BILLING_SPEND_LIMIT_REACHED',
      remaining: '5.000000',
      limit: '10.000000',
      spent: '4.000000',
      held: '1.000000',
      required: '5.000001',
      scope: { userId: 'u_1' },
      resetsAt: period.end.toISOString(),
    });
    expect(refusal(() => spendLimit({ ...limit, limit_micros: null }, { charged: 0n, held: 0n }, 10n ** 15n, period))).toBeNull();
  });
});

describe('what a launch that passed leaves', () => {
  it('the runs left and the quota.exhausted notices of the last slot', () => {
    const usage = { runs: 499, agents: 2, agentSeen: false, active: 0 };
    expect(runsRemaining(free, usage)).toBe(0);
    expect(runsRemaining(catalog.plan('enterprise'), usage)).toBeNull();
    expect(exhaustedNotices(free, period, 'acc_1', 'ag_3', usage).map((n) => n.data)).toEqual([
      expect.objectContaining({ quota: 'runs', limit: 500 }),
      expect.objectContaining({ quota: 'agents', limit: 3 }),
    ]);
    expect(exhaustedNotices(free, period, 'acc_1', 'ag_3', { ...usage, runs: 10 })).toHaveLength(1);
  });

  it('wallet.low_balance under the plan’s threshold only', () => {
    const armed = { available: 10_000_000n, line: null, rises: 0n };
    expect(lowBalanceNotice(free, period, 'acc_1', armed, 5_000_000n)).toBeNull();
    expect(lowBalanceNotice(free, period, 'acc_1', armed, 4_999_999n)).toMatchObject({
      notice: { type: 'wallet.low_balance', data: { available: '4.999999', threshold: '5.000000' } },
      mark: { line: 5_000_000n, rises: 0n },
    });
  });

  it('wallet.low_balance names its crossing: the rises the wallet counted, one more when the reservation itself crosses an older, higher line', () => {
    const cause = (before: { available: bigint; line: bigint | null; rises: bigint }) =>
      lowBalanceNotice(free, period, 'acc_1', before, 1_000_000n)?.notice.cause;
    const start = period.start.toISOString();
    // Told already (line set), still below: the same crossing, the same cause (sent once).
    expect(cause({ available: 3_000_000n, line: 5_000_000n, rises: 2n })).toBe(`wallet.low_balance:acc_1:${start}:2`);
    // The ledger cleared the line and counted the rise: a new crossing.
    expect(cause({ available: 8_000_000n, line: null, rises: 3n })).toBe(`wallet.low_balance:acc_1:${start}:3`);
    // A line above today's threshold (an older plan's) not reached, but this reservation takes the balance from 6 to 1.
    expect(cause({ available: 6_000_000n, line: 50_000_000n, rises: 3n })).toBe(`wallet.low_balance:acc_1:${start}:4`);
  });
});
