import { z } from 'zod';
import { credits } from 'src/common/http/api-schemas';

export const ancillaryUsageSchema = z
  .strictObject({
    kind: z.enum(['snapshot', 'volume', 'egress', 'paused_ram']),
    unit: z.string().meta({ description: 'GiB-month (storage, 730 hours), GiB (egress) or GiB-hour (paused memory)' }),
    priced: z.boolean().meta({ description: 'false: metered while its rate-card item is unpriced, not charged' }),
    quantity: z
      .string()
      .regex(/^\d+\.\d{6}$/)
      .meta({ description: 'In `unit`, 6 decimals (rounded up)' }),
    amount: credits.meta({ description: 'Due for this usage' }),
    charged: credits,
    unpaid: credits.meta({ description: 'Due but not yet paid (the wallet could not pay it)' }),
    rateCardVersions: z.array(z.string()),
  })
  .meta({
    id: 'AncillaryUsage',
    description: 'Ancillary usage of one kind metered in the period (storage hours and egress reports in it)',
  });
