import { createHash } from 'node:crypto';
import type { Period } from 'src/plan-catalog/periods';

/** Idempotency key of a period's allowance grant (unique per account in ledger_transactions). */
export function allowanceKey(period: Period): string {
  return `allowance:${period.start.toISOString()}`;
}

/**
 * The grant id of an account's allowance for a period. Deterministic, so the grant's primary key is
 * the idempotency key per account and period: the allowance of a period was granted exactly when this
 * grant exists.
 */
export function allowanceGrantId(accountId: string, period: Period): string {
  return `alw_${createHash('md5').update(`${accountId}|${period.start.toISOString()}`).digest('hex')}`;
}

export function allowanceReason(planName: string, period: Period): string {
  return `${planName} plan allowance for ${period.start.toISOString()} to ${period.end.toISOString()}`;
}
