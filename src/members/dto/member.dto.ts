import { ACCOUNT_ID_PATTERN } from 'src/common/auth/scopes';
import { z } from 'zod';
import { instant } from 'src/common/http/api-schemas';

/** A user id: the same rule as every id in a path, a reservation's `userId` and a spend limit's scope (one rule on HTTP and Kafka). */
export const USER_ID = ACCOUNT_ID_PATTERN;

export const memberSchema = z
  .strictObject({
    accountId: z.string(),
    userId: z.string(),
    active: z.boolean(),
    changedAt: instant,
    seats: z.number().int().meta({ description: 'Active members after the change' }),
  })
  .meta({ id: 'MemberChange' });

export const membersSchema = z
  .strictObject({
    accountId: z.string(),
    seats: z.number().int().meta({ description: 'Active members' }),
    members: z.array(z.strictObject({ userId: z.string(), active: z.boolean(), changedAt: instant })),
  })
  .meta({ id: 'Members' });
