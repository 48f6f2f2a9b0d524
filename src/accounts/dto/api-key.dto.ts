import { z } from 'zod';
import { instant } from 'src/common/http/api-schemas';
import { scopeSchema } from 'src/common/auth/scopes';

export const createApiKeySchema = z.strictObject({
  scopes: z.array(scopeSchema).min(1, 'at least one scope is required'),
  name: z.string().min(1).max(200).optional(),
});
export type CreateApiKeyDto = z.output<typeof createApiKeySchema>;

export const createdKeySchema = z
  .strictObject({
    id: z.string(),
    key: z.string().meta({ description: 'The secret, shown this once (only its hash is stored)' }),
    scopes: z.array(z.string()),
    name: z.string().nullable(),
  })
  .meta({ id: 'CreatedApiKey' });

export const revokedKeySchema = z.strictObject({ id: z.string(), revokedAt: instant }).meta({ id: 'RevokedApiKey' });
