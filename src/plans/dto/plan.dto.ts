import { z } from 'zod';
import { credits, instant, inputInstant } from 'src/common/http/api-schemas';
import { SIZE_CLASSES } from 'src/pricing/environment';
import { PERIOD_KINDS } from 'src/plan-catalog/periods';
import { planIdField } from 'src/plan-catalog/plan-catalog';

/**
 * PUT /v1/admin/accounts/{id}/plan. `overrides` are validated by planOverridesSchema (findings under `overrides.`);
 * `plan` against the catalog where the request is handled (PlanCatalog.withPlanIds).
 */
export const setPlanSchema = z.strictObject({
  plan: planIdField,
  /** Replaces the account's overrides; absent or null clears them. */
  overrides: z.record(z.string(), z.unknown()).nullable().optional(),
  /** The billing cycle anchor (ISO 8601); absent keeps the current one, null clears it. */
  billingCycleAnchor: inputInstant.nullable().optional(),
});
export type SetPlanDto = z.output<typeof setPlanSchema>;

const limit = z.number().int().nullable().meta({ description: 'null: unlimited' });

export const planTermsSchema = z
  .strictObject({
    id: planIdField,
    name: z.string(),
    includedCredits: credits,
    period: z.enum(PERIOD_KINDS),
    runsPerPeriod: limit,
    agentsPerPeriod: limit,
    concurrentRuntimes: limit,
    sizeClasses: z.array(z.enum(SIZE_CLASSES)),
    gpus: z.boolean(),
    topUps: z.boolean(),
  })
  .meta({ id: 'PlanTerms' });

export const planViewSchema = z
  .strictObject({
    accountId: z.string(),
    plan: planIdField,
    overrides: z.record(z.string(), z.unknown()).nullable().meta({ description: 'The overrides as set (any field of the plan terms)' }),
    billingCycleAnchor: instant.nullable(),
    effective: planTermsSchema.meta({ description: 'The defaults with the overrides on top' }),
    period: z.strictObject({ from: instant, to: instant }),
  })
  .meta({ id: 'AccountPlan' });
