import { z } from 'zod';
import { instant } from 'src/common/http/api-schemas';
import { planIdField } from 'src/plan-catalog/plan-catalog';
import { ACCOUNT_ID_PATTERN } from 'src/common/auth/scopes';
import { SUSPENSION_CAUSES } from 'src/accounts/entities/account.entity';

/** `plan` is checked against the plan catalog where the request is handled (PlanCatalog.withPlanIds). */
export const upsertAccountSchema = z.strictObject({
  id: z.string().regex(ACCOUNT_ID_PATTERN, 'must be 1-128 characters of letters, digits and _.:-'),
  kind: z.enum(['user', 'organization']),
  plan: planIdField,
  name: z.string().trim().min(1).max(200).nullable().optional(),
});
export type UpsertAccountDto = z.output<typeof upsertAccountSchema>;

export const accountSchema = z
  .strictObject({
    id: z.string(),
    kind: z.enum(['user', 'organization']),
    plan: planIdField,
    name: z.string().nullable(),
    status: z.enum(['active', 'suspended']),
    suspendedFor: z.array(z.enum(SUSPENSION_CAUSES)).meta({
      description: 'What holds the account suspended: an admin, non-payment (lifted when the invoice is paid), or both; empty: active',
    }),
    createdAt: instant,
    updatedAt: instant,
  })
  .meta({ id: 'Account' });
