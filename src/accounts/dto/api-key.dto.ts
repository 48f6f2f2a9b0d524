import { z } from 'zod';
import { scopeSchema } from '../auth/scopes';

export const createApiKeySchema = z.strictObject({
  scopes: z.array(scopeSchema).min(1, 'at least one scope is required'),
  name: z.string().min(1).max(200).optional(),
});
export type CreateApiKeyDto = z.output<typeof createApiKeySchema>;
