import { z } from 'zod';
import { instant } from 'src/common/http/api-schemas';

export const USER_ID = /^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,255}$/;

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
