import { z } from 'zod';
import { PLAN_IDS } from '../plan-catalog';

/** PUT /v1/admin/accounts/{id}/plan. `overrides` are validated by planOverridesSchema (findings under `overrides.`). */
export const setPlanSchema = z.strictObject({
  plan: z.enum(PLAN_IDS),
  /** Replaces the account's overrides; absent or null clears them. */
  overrides: z.record(z.string(), z.unknown()).nullable().optional(),
  /** The billing cycle anchor (ISO 8601); absent keeps the current one, null clears it. */
  billingCycleAnchor: z.iso.datetime({ offset: true }).nullable().optional(),
});
export type SetPlanDto = z.output<typeof setPlanSchema>;
