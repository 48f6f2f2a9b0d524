import { z } from 'zod';
import { BillingException } from 'src/common/errors/billing.exception';
import { parseQueryOrThrow } from 'src/common/http/zod-validation.pipe';
import { calendarMonth } from 'src/plan-catalog/periods';
import { CREDIT_GROUPS, USAGE_GROUPS } from './report-names';
import type { Period } from './reports.service';
import { inputInstant } from 'src/common/http/api-schemas';
import { emptyRange } from 'src/common/http/empty-range';

const HOUR_MS = 3_600_000;

const base = {
  from: inputInstant.optional(),
  to: inputInstant.optional(),
  format: z.enum(['json', 'csv']).optional(),
};

export const QUERIES = {
  usage: z.strictObject({ ...base, groupBy: z.enum(USAGE_GROUPS).default('account') }),
  credits: z.strictObject({ ...base, groupBy: z.enum(CREDIT_GROUPS).default('day') }),
  seats: z.strictObject(base),
  'spend-limits': z.strictObject(base),
  reconciliation: z.strictObject(base),
  'top-consumers': z.strictObject({ ...base, limit: z.coerce.number().int().min(1).max(1000).default(10) }),
  ancillary: z.strictObject(base),
};

export type Queries = typeof QUERIES;

/** Parses a report's query: the period defaults to the current calendar month; `hourly` reports need whole UTC hours. */
export function parseReportQuery<K extends keyof Queries>(name: K, query: unknown, now: Date): z.output<Queries[K]> & { period: Period } {
  const q = parseQueryOrThrow(QUERIES[name], query) as z.output<Queries[K]> & { from?: string; to?: string };
  const month = calendarMonth(now);
  const from = q.from ? new Date(q.from) : month.start;
  const to = q.to ? new Date(q.to) : month.end;
  const findings = [];
  if (from >= to) findings.push(emptyRange(q, month));
  if (name === 'usage' || name === 'top-consumers') {
    // Usage is kept per UTC hour: a period that cuts an hour could not be answered exactly.
    if (from.getTime() % HOUR_MS !== 0) findings.push({ field: 'from', message: 'usage is kept per UTC hour: must be a whole hour' });
    if (to.getTime() % HOUR_MS !== 0) findings.push({ field: 'to', message: 'usage is kept per UTC hour: must be a whole hour' });
  }
  if (findings.length > 0) throw BillingException.invalid(findings);
  return { ...q, period: { from, to } };
}
