import { z } from 'zod';
import { ACCOUNT_ID_PATTERN } from '../../accounts/auth/scopes';
import { environmentRequestShape } from '../../pricing/environment';

const id = z.string().regex(ACCOUNT_ID_PATTERN, 'must be 1-128 characters of letters, digits and _.:-');

export const DEFAULT_MINUTES = 10;

export const reservationSchema = z.strictObject({
  accountId: id,
  runtimeId: id,
  userId: id.optional(),
  agentId: id.optional(),
  ...environmentRequestShape,
  minutes: z.number().int('must be an integer').min(1, 'must be at least 1').max(1440, 'must be at most 1440').default(DEFAULT_MINUTES),
});
export type ReservationRequest = z.output<typeof reservationSchema>;

export const extendSchema = z.strictObject({
  minutes: z.number().int('must be an integer').min(1, 'must be at least 1').max(1440, 'must be at most 1440'),
});
export type ExtendRequest = z.output<typeof extendSchema>;
