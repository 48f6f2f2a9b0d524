import type { EntityManager } from 'typeorm';
import type { PlanId } from 'src/plan-catalog/plan-catalog';
import { rows } from 'src/common/database/transaction';
import { SUSPENSION_CAUSES, type AccountStatus, type SuspensionCause } from './entities/account.entity';

/**
 * The changes other modules make to an account (the accounts module owns the table): its plan terms
 * (an admin, Stripe), its status (suspension), its billing cycle anchor (Stripe's first paid cycle).
 * Each in the caller's transaction; the caller audits the change.
 */

/** Sets the plan and the cycle anchor; the overrides too when given (undefined keeps them). */
export async function setPlanTerms(
  em: Pick<EntityManager, 'query'>,
  accountId: string,
  terms: { plan: PlanId; overrides?: Record<string, unknown> | null; billingCycleAnchor: Date | null },
): Promise<void> {
  await em.query(
    `UPDATE accounts SET plan = $2, billing_cycle_anchor = $3, plan_overrides = CASE WHEN $4 THEN $5::jsonb ELSE plan_overrides END,
       updated_at = now() WHERE id = $1`,
    [
      accountId,
      terms.plan,
      terms.billingCycleAnchor,
      terms.overrides !== undefined,
      terms.overrides ? JSON.stringify(terms.overrides) : null,
    ],
  );
}

export interface SuspensionState {
  status: AccountStatus;
  suspendedFor: SuspensionCause[];
}

/**
 * Places (`on`) or lifts one cause of the account's suspension; the account is suspended while any
 * cause holds it, so lifting one leaves the others (an admin's suspension outlives the paid invoice,
 * non-payment outlives the admin's reactivation, unless the admin waives it too: `waivedAt`). The row
 * is locked; null: no such account.
 */
export async function setSuspensionCause(
  em: Pick<EntityManager, 'query'>,
  accountId: string,
  cause: SuspensionCause,
  on: boolean,
  /** A non-payment suspension lifted by an admin: waived at this time (NonPayment reads it). */
  waivedAt: Date | null = null,
): Promise<{ before: SuspensionState; after: SuspensionState } | null> {
  const [row] = await rows<{ status: AccountStatus; suspended_for: SuspensionCause[] }>(
    em,
    `SELECT status, suspended_for FROM accounts WHERE id = $1 FOR UPDATE`,
    [accountId],
  );
  if (!row) return null;
  const before: SuspensionState = { status: row.status, suspendedFor: row.suspended_for };
  const causes = SUSPENSION_CAUSES.filter((c) => (c === cause ? on : before.suspendedFor.includes(c)));
  const after: SuspensionState = { status: causes.length > 0 ? 'suspended' : 'active', suspendedFor: causes };
  if (causes.join() !== before.suspendedFor.join() || after.status !== before.status) {
    await em.query(`UPDATE accounts SET status = $2, suspended_for = $3::text[], updated_at = now() WHERE id = $1`, [
      accountId,
      after.status,
      causes,
    ]);
  }
  if (waivedAt && cause === 'non_payment' && !on && before.suspendedFor.includes('non_payment')) {
    await em.query(`UPDATE accounts SET non_payment_waived_at = $2 WHERE id = $1`, [accountId, waivedAt]);
  }
  return { before, after };
}

/** Anchors the account's billing cycle at `anchor` if it is on `plan` and has no anchor yet. */
export async function anchorBillingCycleIfUnset(
  em: Pick<EntityManager, 'query'>,
  accountId: string,
  plans: readonly PlanId[],
  anchor: Date,
): Promise<void> {
  await em.query(
    `UPDATE accounts SET billing_cycle_anchor = $3, updated_at = now() WHERE id = $1 AND plan = ANY($2::text[]) AND billing_cycle_anchor IS NULL`,
    [accountId, plans, anchor],
  );
}
