import type { EntityManager } from 'typeorm';
import { rows } from 'src/common/database/transaction';
import { type Plan, type PlanCatalog, type PlanId, type PlanOverrides } from 'src/plan-catalog/plan-catalog';
import { periodFor, type Period } from 'src/plan-catalog/periods';

/** An account as its plan sees it: plan, overrides and the subscription's cycle anchor. */
export interface PlanAccount {
  id: string;
  plan: PlanId;
  status: string;
  overrides: PlanOverrides | null;
  billingCycleAnchor: Date | null;
}

export interface PlanAccountRow {
  id: string;
  plan: string;
  status: string;
  plan_overrides: PlanOverrides | null;
  billing_cycle_anchor: Date | null;
}

export async function loadPlanAccount(em: Pick<EntityManager, 'query'>, accountId: string): Promise<PlanAccount | null> {
  const [row] = await rows<PlanAccountRow>(
    em,
    `SELECT id, plan, status, plan_overrides, billing_cycle_anchor FROM accounts WHERE id = $1`,
    [accountId],
  );
  return planAccountOf(row);
}

export function planAccountOf(row: PlanAccountRow | undefined): PlanAccount | null {
  if (!row) return null;
  return { id: row.id, plan: row.plan, status: row.status, overrides: row.plan_overrides, billingCycleAnchor: row.billing_cycle_anchor };
}

/** The account's effective plan and the quota/allowance period containing `at`. */
export function termsOf(catalog: PlanCatalog, account: PlanAccount, at: Date): { plan: Plan; period: Period } {
  const plan = catalog.effective(account.plan, account.overrides);
  return { plan, period: periodFor(plan.period, at, account.billingCycleAnchor) };
}

/**
 * Whether this service grants the plan's allowance itself each period (lazily and in the monthly
 * reset): its trigger is the period's start. A `paid_invoice` plan's (Team's) come with its paid invoice.
 */
export function grantsAllowanceHere(plan: Plan): boolean {
  return plan.allowanceTrigger === 'period_start' && plan.includedCreditsMicros > 0n;
}
