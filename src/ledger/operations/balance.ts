import { spendable } from '../core/burn-order';
import { grantDeltas, walletDelta, type Entry } from '../core/posting';
import type { GrantBucket } from '../core/types';
import type { GrantRow, LockedWallet } from '../persistence/wallet-store';
import type { Balance, GrantView } from '../ledger.types';

/** A wallet's balances (total, held, available, debt) from its grants and holds, and their JSON for audit rows. */
export function balanceOf(grants: readonly GrantBucket[], held: bigint, debtBalance: bigint, now: Date): Balance {
  const debt = -debtBalance;
  // Debt is repaid before credits become spendable, so available is 0 while there is debt.
  const available = debt > 0n ? 0n : spendable(grants, now);
  return { total: available + held - debt, held, available, debt };
}

export function balanceNow(state: LockedWallet, now: Date): Balance {
  return balanceOf(state.grants, state.wallet.holds, state.wallet.debt, now);
}

/** The wallet's balances once `entries` are applied. */
export function afterBalance(state: LockedWallet, entries: readonly Entry[], now: Date, newGrants: readonly GrantRow[] = []): Balance {
  const grants = new Map<string, GrantBucket>();
  for (const g of state.grants) grants.set(g.id, { ...g });
  for (const a of state.allocations) if (!grants.has(a.grant.id)) grants.set(a.grant.id, { ...a.grant });
  for (const g of newGrants) grants.set(g.id, { ...g, remaining: 0n });
  for (const d of grantDeltas(entries)) {
    const g = grants.get(d.grantId);
    if (g) g.remaining += d.amount;
  }
  const delta = walletDelta(entries);
  return balanceOf([...grants.values()], state.wallet.holds + delta.holds, state.wallet.debt + delta.debt, now);
}

export function grantView(g: GrantRow): GrantView {
  return {
    id: g.id,
    source: g.source,
    amount: g.amount,
    remaining: g.remaining,
    priority: g.priority,
    expiresAt: g.expiresAt,
    createdAt: g.createdAt,
  };
}
