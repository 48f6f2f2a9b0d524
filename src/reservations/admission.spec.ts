import { describe, expect, it } from 'vitest';
import type { LedgerBatch } from 'src/ledger/persistence/ledger-batch';
import type { PlanAccount } from 'src/plans/plan-accounts';
import { PlanCatalog } from 'src/plan-catalog/plan-catalog';
import type { Environment } from 'src/pricing/environment';
import type { LimitRow } from 'src/spend-limits/spend-limit-reads';
import { AccountAdmission, admit, type AccountCounts, type Decision, type Launch } from './admission';

const catalog = PlanCatalog.fromFile('config/plans.json');
const now = new Date('2026-12-04T12:00:00Z');
const account: PlanAccount = { id: 'acc_1', plan: 'free', status: 'active', overrides: null, billingCycleAnchor: null };
// Launches without a hold never reach the ledger: the checks before the credits are what is tested here.
const noLedger = {} as LedgerBatch;

function launch(n: number, over: Partial<Launch> = {}): Launch {
  return {
    kind: 'reservation',
    runtimeId: `rt_${n}`,
    accountId: 'acc_1',
    userId: null,
    agentId: null,
    environment: { name: 'python', sizeClass: 'small' } as Environment,
    amount: 1_000_000n,
    hold: null,
    runtime: undefined,
    ...over,
  };
}

function admission(
  counts: Partial<AccountCounts>,
  limits: LimitRow[] = [],
  of: PlanAccount | null = account,
): Map<string, AccountAdmission> {
  const a = AccountAdmission.of(catalog, 'acc_1', { account: of ?? undefined, limits: new Map([['', limits]]) }, now);
  a.counted({ usage: undefined, spend: new Map(), alertsSent: new Set(), noticesSent: new Set(), ...counts });
  return new Map([['acc_1', a]]);
}

const codeOf = (d: Decision): string =>
  'refused' in d ? (d.refused.toBody().error.code as string) : 'admitted' in d ? 'admitted' : 'replay';

describe('admit: one decision over a batch, each launch counting for the next', () => {
  it('takes the last runs of the period one launch at a time, with the notice of the last, then refuses', () => {
    const usage = { runs: 498, agents: 0, active: 0, agentsSeen: new Set<string>() };
    const decided = admit(admission({ usage }), [launch(1), launch(2), launch(3)], noLedger, now);
    expect(decided.map(codeOf)).toEqual(['admitted', 'admitted', 'DL_BILLING_QUOTA_EXCEEDED']);
    expect(decided.map((d) => ('admitted' in d ? d.admitted.runsRemaining : null))).toEqual([1, 0, null]);
    expect('admitted' in decided[1]! && decided[1].admitted.notices.map((n) => n.type)).toEqual(['quota.exhausted']);
  });

  it('counts a new agent once, and concurrency with the launches before it', () => {
    const usage = { runs: 0, agents: 2, active: 0, agentsSeen: new Set(['ag_1']) };
    const launches = [launch(1, { agentId: 'ag_3' }), launch(2, { agentId: 'ag_3' }), launch(3, { agentId: 'ag_4' })];
    expect(admit(admission({ usage }), launches, noLedger, now).map(codeOf)).toEqual(['admitted', 'admitted', 'DL_BILLING_QUOTA_EXCEEDED']);
  });

  it('holds a spend limit across the batch: what passed is held for the next', () => {
    const limit: LimitRow = {
      id: 'sl_1',
      account_id: 'acc_1',
      scope_user_id: '',
      period: 'month',
      limit_micros: '2500000',
      thresholds: [50],
    };
    const enterprise = { ...account, plan: 'enterprise' as const };
    const decided = admit(
      admission({ spend: new Map([['', { charged: 0n, held: 0n }]]) }, [limit], enterprise),
      [launch(1), launch(2), launch(3)],
      noLedger,
      now,
    );
    expect(decided.map(codeOf)).toEqual(['admitted', 'admitted', 'DL_BILLING_SPEND_LIMIT_REACHED']);
    // The first crosses nothing; the second crosses 50 %: its alert is due.
    expect(decided.slice(0, 2).map((d) => 'admitted' in d && d.admitted.alertsDue)).toEqual([false, true]);
  });

  it('decides in the contract’s order: reserved already, another account’s runtime, no account, suspended, plan', () => {
    const suspended = { ...account, status: 'suspended' };
    expect(
      codeOf(
        admit(
          admission({}, [], suspended),
          [launch(1, { runtime: { account: 'acc_1', reserved: true, ended: false } })],
          noLedger,
          now,
        )[0]!,
      ),
    ).toBe('replay');
    expect(
      codeOf(
        admit(admission({}, [], null), [launch(1, { runtime: { account: 'acc_2', reserved: false, ended: false } })], noLedger, now)[0]!,
      ),
    ).toBe('DL_BILLING_IDEMPOTENCY_CONFLICT');
    expect(codeOf(admit(admission({}, [], null), [launch(1)], noLedger, now)[0]!)).toBe('DL_BILLING_NOT_FOUND');
    const large = launch(1, { environment: { name: 'python', sizeClass: 'large' } as Environment });
    expect(codeOf(admit(admission({}, [], suspended), [large], noLedger, now)[0]!)).toBe('DL_BILLING_ACCOUNT_SUSPENDED');
    expect(codeOf(admit(admission({}), [large], noLedger, now)[0]!)).toBe('DL_BILLING_PLAN_FORBIDS');
  });

  it('an extension is checked like a launch but counts no run', () => {
    const usage = { runs: 500, agents: 0, active: 2, agentsSeen: new Set<string>() };
    expect(admit(admission({ usage }), [launch(1, { kind: 'extension' })], noLedger, now).map(codeOf)).toEqual(['admitted']);
  });
});
