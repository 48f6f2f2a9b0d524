import { z } from 'zod';
import { parseCredits } from '../../common/money';
import { GRANT_SOURCES } from '../core/types';

export const creditsSchema = z
  .string()
  .regex(/^\d{1,12}(\.\d{1,6})?$/, 'must be an amount of credits with up to 6 decimals, e.g. "10.000000"');

export const createGrantSchema = z.strictObject({
  // (A malformed amount is reported once, by the pattern.)
  credits: creditsSchema.refine((v) => (parseCredits(v) ?? 1n) > 0n, 'must be more than 0'),
  expiresAt: z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' }).nullable().optional(),
  reason: z.string().trim().min(1, 'is required').max(500),
  source: z.enum(GRANT_SOURCES).default('admin'),
  priority: z.number().int('must be an integer').min(-1_000_000).max(1_000_000).optional(),
});
export type CreateGrantDto = z.output<typeof createGrantSchema>;

export const idempotencyKeySchema = z
  .string()
  .regex(/^[\x21-\x7e]{1,255}$/, 'must be 1-255 visible ASCII characters')
  .optional();

export const statementQuerySchema = z.strictObject({
  cursor: z.string().regex(/^\d{1,18}$/, 'must be a cursor returned by this endpoint').optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});
