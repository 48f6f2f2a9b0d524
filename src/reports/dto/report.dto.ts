import { z } from 'zod';
import { instant } from 'src/common/http/api-schemas';
import { REPORT_NAMES } from '../reports.service';

const cell = z.union([z.string(), z.number(), z.boolean(), z.null()]);

export const reportSchema = z
  .strictObject({
    report: z.enum(REPORT_NAMES),
    from: instant,
    to: instant,
    groupBy: z.string().optional(),
    columns: z.array(z.string()).meta({ description: 'The keys of each item, in order (also the CSV header)' }),
    items: z
      .array(z.record(z.string(), cell))
      .meta({ description: 'One row per item, keyed by `columns`; amounts of credits as 6-decimal strings, USD in cents' }),
    totals: z.record(z.string(), cell).optional(),
    notes: z.array(z.string()).optional(),
  })
  .meta({ id: 'Report' });
