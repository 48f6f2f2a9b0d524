import { createHash } from 'node:crypto';
import type { Period } from 'src/plan-catalog/periods';

/** Idempotency key of a period's allowance grant (unique per account in ledger_transactions). */
export function allowanceKey(period: Period): string {
  return `allowance:${period.start.toISOString()}`;
}

/**
 * The grant id of an account's allowance for a period, granted by this service (the period's start:
 * Free, Enterprise). Deterministic, so the grant's primary key is
 * the idempotency key per account and period: the allowance of a period was granted exactly when this
 * grant exists.
 */
export function allowanceGrantId(accountId: string, period: Period): string {
  return `alw_${createHash('md5').update(`${accountId}|${period.start.toISOString()}`).digest('hex')}`;
}

/**
 * Ledger key of the rest of a period's allowance granted at an upgrade within the period (the plan's
 * included credits then, in µcr, make it once per level reached). The grant's id is random: its
 * transaction's key is what ties it to its period (`upgradeKeyPattern`).
 */
export function upgradeKey(period: Period, includedMicros: bigint): string {
  return `${allowanceKey(period)}:upgrade:${includedMicros}`;
}

/** A LIKE pattern matching the keys of every upgrade's rest granted within the period. */
export function upgradeKeyPattern(period: Period): string {
  return `${allowanceKey(period)}:upgrade:%`;
}

export function allowanceReason(planName: string, period: Period): string {
  return `${planName} plan allowance for ${period.start.toISOString()} to ${period.end.toISOString()}`;
}

/**
 * The grant id of a billing cycle's allowance brought by its paid invoice (Team), and its ledger key:
 * distinct from the period-start allowance of a month starting at the same instant (a Team cycle
 * starting on the 1st, on an account moved to or from Enterprise that month), so neither hides the
 * other. A cycle granted before 2026-12-06 has `allowanceGrantId`'s id, told apart by its reference
 * (the invoice; this service's own grants have none): it still counts as the cycle's grant.
 */
export function cycleGrantId(accountId: string, period: Period): string {
  return `alw_${createHash('md5').update(`${accountId}|paid_invoice|${period.start.toISOString()}`).digest('hex')}`;
}

export function cycleAllowanceKey(period: Period): string {
  return `allowance:paid_invoice:${period.start.toISOString()}`;
}
