import { Controller, Get, Headers, Param, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { z } from 'zod';
import { Access } from 'src/common/auth/auth.decorators';
import { BillingException } from 'src/common/errors/billing.exception';
import { Doc } from 'src/common/http/openapi';
import { parseQueryOrThrow } from 'src/common/http/zod-validation.pipe';
import { formatCredits } from 'src/common/money';
import { credits, instant, inputInstant } from 'src/common/http/api-schemas';
import { Clock } from 'src/infra/clock/clock';
import { calendarMonth } from 'src/plan-catalog/periods';
import { emptyRange } from 'src/common/http/empty-range';
import { toCsv, wantsCsv } from 'src/reports/to-csv';
import { ancillaryUsageSchema } from 'src/ancillary/dto/ancillary-usage.dto';
import { ancillaryUsageJson, meteredAncillary } from 'src/ancillary/usage-view';
import { accountExists, usageByGroup } from './usage-reads';

const usageQuery = z.strictObject({
  from: inputInstant.optional(),
  to: inputInstant.optional(),
  groupBy: z.enum(['runtime', 'environment', 'day', 'user']).default('runtime'),
  format: z.enum(['json', 'csv']).optional(),
});

const usageTotals = { runtimes: z.number().int(), seconds: z.number().int(), credits };

export const usageSchema = z
  .strictObject({
    accountId: z.string(),
    from: instant,
    to: instant,
    groupBy: z.enum(['runtime', 'environment', 'day', 'user']),
    items: z.array(
      z
        .strictObject({ runtime: z.string(), environment: z.string(), day: z.string(), user: z.string(), ...usageTotals })
        .partial({ runtime: true, environment: true, day: true, user: true })
        .meta({ description: 'One group: its key under the groupBy name, then its totals' }),
    ),
    total: z.strictObject(usageTotals),
    ancillary: z
      .array(ancillaryUsageSchema)
      .meta({ description: 'Snapshots, volumes and egress metered in [from, to), by kind (not in the CSV)' }),
  })
  .meta({ id: 'Usage' });

/** Billable usage of an account in [from, to), dated as its statement: charges posted in the period, and charges so far of active runtimes. */
@Controller('v1/accounts/:id/usage')
@Access('control-plane', 'reports', { accountParam: 'id' })
export class UsageController {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly clock: Clock,
  ) {}

  @Get()
  @Doc({
    id: 'getUsage',
    summary: 'Billable usage by runtime, environment, day or user',
    description:
      'Usage in [from, to) (default: this calendar month), dated as the statement: runtimes (and their running time) first settled in the period, the charges and corrections posted in it, and the charges so far of runtimes active now when now is in it. JSON, or CSV with `format=csv` or `Accept: text/csv`.',
    tag: 'Wallet',
    query: usageQuery,
    responses: { 200: { description: 'The usage', schema: usageSchema, csv: true } },
    errors: ['DL_BILLING_NOT_FOUND'],
  })
  async usage(
    @Param('id') accountId: string,
    @Query() query: unknown,
    @Headers('accept') accept: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Record<string, unknown> | string> {
    const q = parseQueryOrThrow(usageQuery, query);
    const now = this.clock.now();
    const month = calendarMonth(now);
    const from = q.from ? new Date(q.from) : month.start;
    const to = q.to ? new Date(q.to) : month.end;
    if (from >= to) throw BillingException.invalid([emptyRange(q, month)]);
    if (!(await accountExists(this.ds, accountId))) throw BillingException.notFound(`Account ${accountId}`);
    const items = await usageByGroup(this.ds, { accountId, from, to, now, groupBy: q.groupBy });
    // Each row's whole seconds, rounded down; the total is their sum, so the rows add up to it.
    const rowsOut = items.map((i) => ({
      [q.groupBy]: i.key,
      runtimes: i.runtimes,
      seconds: Number(BigInt(i.ms) / 1000n),
      credits: formatCredits(BigInt(i.credits)),
    }));
    const total = {
      runtimes: rowsOut.reduce((n, r) => n + r.runtimes, 0),
      seconds: rowsOut.reduce((n, r) => n + r.seconds, 0),
      credits: formatCredits(items.reduce((n, i) => n + BigInt(i.credits), 0n)),
    };
    // CSV as the reports write it (one line per item, the columns as header), chosen the same way.
    if (wantsCsv(q.format, accept)) {
      const name = `usage_${accountId}_${from.toISOString().slice(0, 10)}_${to.toISOString().slice(0, 10)}.csv`;
      void reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${name}"`);
      return toCsv({ columns: [q.groupBy, 'runtimes', 'seconds', 'credits'], items: rowsOut });
    }
    const ancillary = (await meteredAncillary(this.ds, { accountId, from, to })).map(ancillaryUsageJson);
    return { accountId, from: from.toISOString(), to: to.toISOString(), groupBy: q.groupBy, items: rowsOut, total, ancillary };
  }
}
