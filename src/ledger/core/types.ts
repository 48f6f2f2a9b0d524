/** The sources a grant (credit bucket) can come from. */
export const GRANT_SOURCES = ['plan_allowance', 'top_up', 'admin', 'promotion'] as const;
export type GrantSource = (typeof GRANT_SOURCES)[number];

/**
 * Default priority per source: with equal expiry, the lower number burns first, so free credits
 * (allowance, promotion, admin) are spent before credits that were paid for (top-ups).
 */
export const DEFAULT_PRIORITY: Record<GrantSource, number> = {
  plan_allowance: 0,
  promotion: 10,
  admin: 20,
  top_up: 30,
};

/** What burn order needs to know about a grant. */
export interface BurnKey {
  id: string;
  priority: number;
  expiresAt: Date | null;
  createdAt: Date;
}

/** A grant with its unheld balance. */
export interface GrantBucket extends BurnKey {
  remaining: bigint;
}

/** An amount taken from, or given to, one grant. */
export interface Part {
  grantId: string;
  amount: bigint;
}

export function assertNonNegative(name: string, value: bigint): void {
  if (value < 0n) throw new RangeError(`${name} must not be negative (got ${value})`);
}
