import { inBurnOrder } from './burn-order';
import { assertNonNegative, type BurnKey, type Part } from './types';

/** What a hold took from one grant. */
export interface HeldPart {
  grant: BurnKey;
  held: bigint;
}

export interface SettlementSplit {
  /** The charge actually taken: the requested amount, capped at the hold. */
  charge: bigint;
  /** Held minus charge: what goes back. */
  release: bigint;
  charged: Part[];
  released: Part[];
}

/** A settlement never charges more than the hold. */
export function capCharge(requested: bigint, held: bigint): bigint {
  assertNonNegative('charge', requested);
  return requested > held ? held : requested;
}

/**
 * Splits a settlement over the hold's allocations: the charge is taken from them in burn order
 * (credits that expire first are spent first), the rest of each allocation is released.
 */
export function splitSettlement(parts: readonly HeldPart[], requested: bigint): SettlementSplit {
  let held = 0n;
  for (const p of parts) {
    assertNonNegative('held', p.held);
    held += p.held;
  }
  const charge = capCharge(requested, held);
  let rest = charge;
  const charged: Part[] = [];
  const released: Part[] = [];
  for (const p of inBurnOrder(parts.map((x) => ({ ...x.grant, held: x.held })))) {
    const take = p.held < rest ? p.held : rest;
    rest -= take;
    if (take > 0n) charged.push({ grantId: p.id, amount: take });
    if (p.held - take > 0n) released.push({ grantId: p.id, amount: p.held - take });
  }
  return { charge, release: held - charge, charged, released };
}
