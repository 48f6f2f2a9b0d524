/**
 * Every plan id, defined once: the plan catalog's keys (config/plans.json), the `accounts.plan`
 * check constraint, and the APIs' enums.
 */
export const PLAN_IDS = ['free', 'team', 'enterprise'] as const;
export type PlanId = (typeof PLAN_IDS)[number];

export function isPlanId(value: unknown): value is PlanId {
  return typeof value === 'string' && (PLAN_IDS as readonly string[]).includes(value);
}
