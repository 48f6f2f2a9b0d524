import { inBurnOrder, isExpired } from './burn-order';
import { assertNonNegative, type BurnKey, type Part } from './types';

/** Credits going back to (or newly into) a grant. */
export interface ReturnPart {
  /** `status` 'expired': the expiry job has expired it already (its remaining is 0, and stays so). */
  grant: BurnKey & { status?: 'active' | 'expired' };
  amount: bigint;
}

/** A settled hold whose charge was partly covered by debt (the wallet could not pay it). */
export interface DebtHold {
  holdId: string;
  debt: bigint;
}

/** Credits of a grant that paid down a hold's debt: the hold's charge now comes from that grant. */
export interface Repayment {
  holdId: string;
  grantId: string;
  amount: bigint;
}

export interface ReturnPlan {
  /** Back into the grant's unheld balance. */
  toGrants: Part[];
  /** The grant expired meanwhile: expired at once, so nothing is lost or counted twice. */
  toExpired: Part[];
  /** Paid against debt before anything becomes spendable. */
  repayments: Repayment[];
  repaid: bigint;
}

/**
 * Where returning credits go: parts of expired grants are expired at once (expired at `now`, or
 * already marked expired by the expiry job: a settlement dated just before a grant's expiry but
 * written after the job ran); the others first pay
 * the wallet's debt (oldest debt first, in burn order of the grants) and the rest goes back to
 * its grant. Used for releases, refunds and new grants alike.
 */
export function planReturn(parts: readonly ReturnPart[], now: Date, debtHolds: readonly DebtHold[]): ReturnPlan {
  const debts = debtHolds.filter((d) => d.debt > 0n).map((d) => ({ ...d }));
  const toGrants: Part[] = [];
  const toExpired: Part[] = [];
  const repayments: Repayment[] = [];
  let repaid = 0n;
  let d = 0;
  const ordered = inBurnOrder(parts.map((p) => ({ ...p.grant, amount: p.amount })));
  for (const p of ordered) {
    assertNonNegative('amount', p.amount);
    if (p.amount === 0n) continue;
    if (p.status === 'expired' || isExpired(p, now)) {
      toExpired.push({ grantId: p.id, amount: p.amount });
      continue;
    }
    let rest = p.amount;
    while (rest > 0n && d < debts.length) {
      const debt = debts[d]!;
      const pay = debt.debt < rest ? debt.debt : rest;
      repayments.push({ holdId: debt.holdId, grantId: p.id, amount: pay });
      debt.debt -= pay;
      rest -= pay;
      repaid += pay;
      if (debt.debt === 0n) d++;
    }
    if (rest > 0n) toGrants.push({ grantId: p.id, amount: rest });
  }
  return { toGrants, toExpired, repayments, repaid };
}
