import { allocate, inBurnOrder } from './burn-order';
import { planReturn, type DebtHold, type ReturnPart, type ReturnPlan } from './returns';
import { assertNonNegative, type BurnKey, type GrantBucket, type Part } from './types';

export interface AdjustInput {
  /** The hold's amount: a charge never exceeds it. */
  holdAmount: bigint;
  /** The hold's charge now (settlement plus earlier adjustments). */
  currentCharge: bigint;
  newCharge: bigint;
  /** What this hold's charge was taken from, per grant. */
  charges: readonly { grant: BurnKey; charged: bigint }[];
  /** The part of this hold's charge the wallet could not pay. */
  holdDebt: bigint;
  /** The wallet's grants with their unheld balances, to charge more from. */
  walletGrants: readonly GrantBucket[];
  /** Other holds with debt (oldest first): refunded credits pay them down. */
  otherDebtHolds: readonly DebtHold[];
  now: Date;
}

export interface AdjustPlan {
  /** The charge after the adjustment (capped at the hold). */
  charge: bigint;
  /** charge − currentCharge. */
  delta: bigint;
  /** Charging more: taken from the wallet's grants in burn order. */
  take: Part[];
  /** Charging more than the wallet holds: recorded as debt. */
  newDebt: bigint;
  /** Refunding: the part of the refund that cancels this hold's own debt. */
  cancelDebt: bigint;
  /** Refunding: the rest, back to the grants it was charged from (or expired, or paying other debt). */
  refund: ReturnPlan;
  /** Signed change of this hold's charge per grant. */
  chargeChanges: Part[];
}

/**
 * A correction of a settled charge. Charging more takes from the wallet's grants in burn order
 * and records any shortfall as debt; refunding first cancels the hold's own debt, then gives back
 * what was charged from grants, the last-burned grant first.
 */
export function planAdjustment(input: AdjustInput): AdjustPlan {
  assertNonNegative('newCharge', input.newCharge);
  const charge = input.newCharge > input.holdAmount ? input.holdAmount : input.newCharge;
  const delta = charge - input.currentCharge;
  const empty: ReturnPlan = { toGrants: [], toExpired: [], repayments: [], repaid: 0n };
  if (delta >= 0n) {
    const { parts, shortfall } = allocate(input.walletGrants, delta, input.now);
    return { charge, delta, take: parts, newDebt: shortfall, cancelDebt: 0n, refund: empty, chargeChanges: parts };
  }
  let rest = -delta;
  const cancelDebt = input.holdDebt < rest ? input.holdDebt : rest;
  rest -= cancelDebt;
  const back: ReturnPart[] = [];
  const ordered = inBurnOrder(input.charges.map((c) => ({ ...c.grant, charged: c.charged }))).reverse();
  for (const c of ordered) {
    if (rest === 0n) break;
    const give = c.charged < rest ? c.charged : rest;
    if (give > 0n) back.push({ grant: c, amount: give });
    rest -= give;
  }
  if (rest !== 0n) throw new RangeError('the hold was charged less than its recorded charge');
  const refund = planReturn(back, input.now, input.otherDebtHolds);
  const chargeChanges = back.map((b) => ({ grantId: b.grant.id, amount: -b.amount }));
  return { charge, delta, take: [], newDebt: 0n, cancelDebt, refund, chargeChanges };
}
