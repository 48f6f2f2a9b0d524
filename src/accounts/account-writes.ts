import type { EntityManager } from 'typeorm';
import type { PlanId } from 'src/plan-catalog/plan-catalog';
import type { AccountStatus } from './entities/account.entity';

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

export async function setAccountStatus(em: Pick<EntityManager, 'query'>, accountId: string, status: AccountStatus): Promise<void> {
  await em.query(`UPDATE accounts SET status = $2, updated_at = now() WHERE id = $1`, [accountId, status]);
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
