import type { EntityManager } from 'typeorm';
import type { AuditService } from 'src/audit/audit.service';
import type { PlanId } from 'src/plan-catalog/plan-catalog';
import { loadPlanAccount } from './plan-accounts';

/** An account's plan and its overrides (the terms an allowance is granted on). */
export interface PlanTerms {
  plan: PlanId;
  overrides: Record<string, unknown> | null;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The terms an account had before `changes` (its plan changes since some time, newest first), undone
 * one by one from its terms now. Each change's `before` holds the plan; the overrides are there when
 * the writer kept them (an admin's change always; Stripe's and the control plane's only when the
 * change dropped some): absent, a change of plan had none before it, and a change that kept the plan
 * (its anchor, the account's name) left them as they were.
 */
export function termsBefore(now: PlanTerms, changes: readonly { before: unknown; after: unknown }[]): PlanTerms {
  let terms = now;
  for (const change of changes) {
    const { before, after } = change;
    if (!isObj(before) || typeof before.plan !== 'string') continue; // a creation: nothing before it
    const planChanged = !isObj(after) || after.plan !== before.plan;
    const overrides = 'overrides' in before ? (isObj(before.overrides) ? before.overrides : null) : planChanged ? null : terms.overrides;
    terms = { plan: before.plan, overrides };
  }
  return terms;
}

/**
 * The account's plan terms at `at`: its terms now, with the changes recorded in its audit chain at
 * or after `at` undone. Null: no such account.
 */
export async function planTermsAt(em: EntityManager, audit: AuditService, accountId: string, at: Date): Promise<PlanTerms | null> {
  const account = await loadPlanAccount(em, accountId);
  if (!account) return null;
  const changes = await audit.planChangesSince(em, accountId, at);
  return termsBefore({ plan: account.plan, overrides: account.overrides }, changes);
}
