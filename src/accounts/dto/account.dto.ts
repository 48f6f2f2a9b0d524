import { z } from 'zod';
import { instant } from '../../common/http/api-schemas';
import { PLAN_IDS } from '../../plans/plan-ids';
import { ACCOUNT_ID_PATTERN } from '../auth/scopes';

export const upsertAccountSchema = z.strictObject({
  id: z.string().regex(ACCOUNT_ID_PATTERN, 'must be 1-128 characters of letters, digits and _.:-'),
  kind: z.enum(['user', 'organization']),
  plan: z.enum(PLAN_IDS),
  name: z.string().trim().min(1).max(200).nullable().optional(),
});
export type UpsertAccountDto = z.output<typeof upsertAccountSchema>;

export const accountSchema = z
  .strictObject({
    id: z.string(),
    kind: z.enum(['user', 'organization']),
    plan: z.enum(PLAN_IDS),
    name: z.string().nullable(),
    status: z.enum(['active', 'suspended']),
    createdAt: instant,
    updatedAt: instant,
  })
  .meta({ id: 'Account' });
