import { assertNonNegative, type BurnKey, type GrantBucket, type Part } from './types';

const NEVER = Number.POSITIVE_INFINITY;

/**
 * The contract's burn order: earliest expiry first (a grant that never expires comes last), then
 * the lower priority number, then the oldest grant; the id breaks the last ties so the order is total.
 */
export function compareBurnOrder(a: BurnKey, b: BurnKey): number {
  const ea = a.expiresAt?.getTime() ?? NEVER;
  const eb = b.expiresAt?.getTime() ?? NEVER;
  if (ea !== eb) return ea < eb ? -1 : 1;
  if (a.priority !== b.priority) return a.priority < b.priority ? -1 : 1;
  const ca = a.createdAt.getTime();
  const cb = b.createdAt.getTime();
  if (ca !== cb) return ca < cb ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export function inBurnOrder<T extends BurnKey>(items: readonly T[]): T[] {
  return [...items].sort(compareBurnOrder);
}

/** A grant is expired from its `expiresAt` on (periods are half-open). */
export function isExpired(grant: Pick<BurnKey, 'expiresAt'>, now: Date): boolean {
  return grant.expiresAt !== null && grant.expiresAt.getTime() <= now.getTime();
}

/** What can still be spent: the unheld balance of every grant that has not expired. */
export function spendable(grants: readonly GrantBucket[], now: Date): bigint {
  let sum = 0n;
  for (const g of grants) if (!isExpired(g, now) && g.remaining > 0n) sum += g.remaining;
  return sum;
}

/**
 * Takes `amount` from the grants in burn order, skipping expired and empty ones.
 * Returns the parts taken and the shortfall (what the grants could not cover).
 */
export function allocate(grants: readonly GrantBucket[], amount: bigint, now: Date): { parts: Part[]; shortfall: bigint } {
  assertNonNegative('amount', amount);
  const parts: Part[] = [];
  let rest = amount;
  for (const g of inBurnOrder(grants)) {
    if (rest === 0n) break;
    if (isExpired(g, now) || g.remaining <= 0n) continue;
    const take = g.remaining < rest ? g.remaining : rest;
    parts.push({ grantId: g.id, amount: take });
    rest -= take;
  }
  return { parts, shortfall: rest };
}

/** Adds parts together per grant, keeping the first-seen order. */
export function mergeParts(...lists: readonly (readonly Part[])[]): Part[] {
  const totals = new Map<string, bigint>();
  for (const list of lists) for (const p of list) totals.set(p.grantId, (totals.get(p.grantId) ?? 0n) + p.amount);
  return [...totals].filter(([, amount]) => amount !== 0n).map(([grantId, amount]) => ({ grantId, amount }));
}

export function sumParts(parts: readonly Part[]): bigint {
  let sum = 0n;
  for (const p of parts) sum += p.amount;
  return sum;
}
