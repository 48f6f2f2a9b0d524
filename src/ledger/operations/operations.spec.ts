import { describe, expect, it } from 'vitest';
import { BillingException } from 'src/common/errors/billing.exception';
import { withCorrelation } from 'src/common/context/correlation';
import { createHoldOperation } from './create-hold';
import { grantOperation } from './grant';
import { resolveOperation } from './resolve-hold';
import type { GrantRow, LockedWallet } from '../persistence/wallet-store';

const NOW = new Date('2026-12-02T09:00:00.000Z');

function grant(id: string, remaining: bigint, expiresAt: Date | null = null): GrantRow {
  return {
    id,
    source: 'admin',
    amount: remaining,
    remaining,
    priority: 20,
    expiresAt,
    createdAt: new Date('2026-11-01T00:00:00Z'),
    status: 'active',
  };
}

function wallet(over: Partial<LockedWallet> = {}): LockedWallet {
  const grants = over.grants ?? [grant('g1', 5_000_000n)];
  const sum = grants.reduce((a, g) => a + g.remaining, 0n);
  return {
    wallet: { accountId: 'acc', version: 7n, grants: sum, holds: 0n, issued: -sum, consumed: 0n, expired: 0n, debt: 0n },
    grants,
    prior: null,
    hold: null,
    allocations: [],
    debtHolds: [],
    ...over,
  };
}

describe('ledger decisions (pure: locked state + request → transaction to write)', () => {
  it('a hold moves credits from grants to the hold, balanced, and refuses to overdraw with the amounts', () => {
    const op = createHoldOperation({ accountId: 'acc', holdId: 'h1', amount: 2_000_000n, reference: 'rt', idempotencyKey: 'k' });
    const d = op.decide(wallet(), NOW);
    if (d.write === null) throw new Error('expected a write');
    expect(d.write.entries).toEqual([
      { account: 'grant:g1', amount: -2_000_000n },
      { account: 'hold:h1', amount: 2_000_000n },
    ]);
    expect(d.write.after).toEqual({ total: 5_000_000n, held: 2_000_000n, available: 3_000_000n, debt: 0n });
    // Its result tells the balance it was decided on and the one it leaves (admission's low-balance notice reads both).
    expect(d.result('tx_1')).toMatchObject({
      before: { total: 5_000_000n, held: 0n, available: 5_000_000n, debt: 0n },
      balance: d.write.after,
      replayed: false,
    });
    expect(d.audit).toMatchObject({
      action: 'hold.created',
      accountId: 'acc',
      before: { total: '5.000000', available: '5.000000', held: '0.000000', debt: '0.000000' },
      after: {
        total: '5.000000',
        available: '3.000000',
        held: '2.000000',
        debt: '0.000000',
        hold: { id: 'h1', amount: '2.000000', reference: 'rt' },
      },
    });
    // before and after are the wallet's balances, with the same keys: they compare.
    const balanceKeys = (o: unknown): string[] =>
      Object.keys(o as object)
        .filter((k) => k !== 'hold' && k !== 'reason')
        .sort();
    expect(balanceKeys(d.audit!.after)).toEqual(balanceKeys(d.audit!.before));

    const big = createHoldOperation({ accountId: 'acc', holdId: 'h2', amount: 5_000_001n, reference: null, idempotencyKey: 'k2' });
    const refused = (() => {
      try {
        big.decide(wallet(), NOW);
      } catch (e) {
        return e as BillingException;
      }
      return null;
    })();
    expect(refused?.toBody()).toEqual({
      error: { code: 'DL_BILLING_INSUFFICIENT_CREDITS', message: expect.any(String), available: '5.000000', required: '5.000001' },
    });
  });

  it('an operation carries the correlation current when it is made, not when it is decided (a batch decides it later)', () => {
    const op = withCorrelation({ id: 'req-1', kind: 'request' }, () =>
      createHoldOperation({ accountId: 'acc', holdId: 'h1', amount: 1_000_000n, reference: null, idempotencyKey: 'k' }),
    );
    const d = withCorrelation({ id: 'req-2', kind: 'request' }, () => op.decide(wallet(), NOW));
    expect(d.write === null ? null : d.audit?.correlationId).toBe('req-1');
    const own = createHoldOperation({
      accountId: 'acc',
      holdId: 'h2',
      amount: 1_000_000n,
      reference: null,
      idempotencyKey: 'k2',
      correlationId: 'evt-1',
    });
    const e = own.decide(wallet(), NOW);
    expect(e.write === null ? null : e.audit?.correlationId).toBe('evt-1');
  });

  it('ignores expired grants that the sweep has not reached yet', () => {
    const op = createHoldOperation({ accountId: 'acc', holdId: 'h1', amount: 1_000_000n, reference: null, idempotencyKey: 'k' });
    expect(() => op.decide(wallet({ grants: [grant('old', 5_000_000n, NOW)] }), NOW)).toThrow(/Not enough credits/);
  });

  it('replays the same request under a key and refuses a different one', () => {
    const op = grantOperation({
      accountId: 'acc',
      source: 'admin',
      amount: 1n,
      expiresAt: null,
      idempotencyKey: 'k',
      reason: 'r',
      actor: 'a',
      grantId: 'g9',
    });
    const first = op.decide(wallet(), NOW);
    if (first.write === null) throw new Error('expected a write');
    const prior = {
      id: '41',
      kind: 'grant' as const,
      fingerprint: first.write.fingerprint,
      holdId: null,
      grantId: 'g9',
      explanation: {},
      grant: grant('g9', 1n),
    };
    expect(op.decide(wallet({ prior }), NOW)).toMatchObject({ write: null, result: { replayed: true, transactionId: '41' } });
    const other = grantOperation({
      accountId: 'acc',
      source: 'admin',
      amount: 2n,
      expiresAt: null,
      idempotencyKey: 'k',
      reason: 'r',
      actor: 'a',
      grantId: 'g9',
    });
    expect(() => other.decide(wallet({ prior }), NOW)).toThrow(expect.objectContaining({ code: 'DL_BILLING_IDEMPOTENCY_CONFLICT' }));
  });

  it('a new grant pays the debt first, attributing the repaid charge to the new grant', () => {
    const state = wallet({ grants: [], debtHolds: [{ holdId: 'hd', debt: 700_000n }] });
    state.wallet = { ...state.wallet, debt: -700_000n, consumed: 700_000n, issued: 0n };
    const d = grantOperation({
      accountId: 'acc',
      source: 'top_up',
      amount: 1_000_000n,
      expiresAt: null,
      idempotencyKey: 'k',
      reason: 'r',
      actor: 'a',
      grantId: 'gn',
    }).decide(state, NOW);
    if (d.write === null) throw new Error('expected a write');
    expect(d.write.kind).toBe('top-up');
    expect(d.write.newGrant?.remaining).toBe(300_000n);
    expect(d.write.entries).toEqual([
      { account: 'issued', amount: -1_000_000n },
      { account: 'grant:gn', amount: 300_000n },
      { account: 'debt', amount: 700_000n },
    ]);
    expect(d.write.allocationDeltas).toEqual([{ holdId: 'hd', grantId: 'gn', charged: 700_000n }]);
    expect(d.write.after).toEqual({ total: 300_000n, held: 0n, available: 300_000n, debt: 0n });
  });

  it('answers a resolved hold with its first outcome, whatever is asked', () => {
    const hold = {
      id: 'h1',
      accountId: 'acc',
      status: 'voided' as const,
      amount: 3n,
      settledAmount: 0n,
      releasedAmount: 3n,
      chargedAmount: 0n,
      debtAmount: 0n,
      reference: null,
      expiresAt: null,
      createdAt: NOW,
      resolvedAt: NOW,
    };
    const d = resolveOperation('h1', 'settle', 2n, {}).decide(wallet({ hold }), NOW);
    expect(d).toMatchObject({ write: null, result: { status: 'voided', charged: 0n, released: 3n, firstTime: false } });
  });
});
