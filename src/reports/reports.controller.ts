import { Controller, Get, Headers, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { Access } from 'src/common/auth/auth.decorators';
import { Doc } from 'src/common/http/openapi';
import { Clock } from 'src/infra/clock/clock';
import { parseReportQuery, QUERIES } from './report-query';
import {
  ancillaryReportSchema,
  creditsReportSchema,
  reconciliationReportSchema,
  seatsReportSchema,
  spendLimitsReportSchema,
  topConsumersReportSchema,
  usageReportSchema,
} from './dto/report.dto';
import { ReportsService, type Report } from './reports.service';
import { toCsv, wantsCsv } from './to-csv';

/** `GET /v1/reports/…`: admin or reports scope; JSON, or CSV with `?format=csv` or `Accept: text/csv`. */
@Controller('v1/reports')
@Access('reports')
export class ReportsController {
  constructor(
    private readonly reports: ReportsService,
    private readonly clock: Clock,
  ) {}

  @Get('usage')
  @Doc({
    id: 'usageReport',
    summary: 'Settled usage by account, environment, day or user',
    description: 'from and to are whole UTC hours. JSON, or CSV with `format=csv` or `Accept: text/csv`.',
    tag: 'Reports',
    query: QUERIES['usage'],
    responses: { 200: { description: 'The report', schema: usageReportSchema, csv: true } },
  })
  async usage(@Query() query: unknown, @Headers('accept') accept: string | undefined, @Res({ passthrough: true }) reply: FastifyReply) {
    const q = parseReportQuery('usage', query, this.clock.now());
    return send(reply, q.format, accept, await this.reports.usage(q.period, q.groupBy));
  }

  @Get('credits')
  @Doc({
    id: 'creditsReport',
    summary: 'Credits flow: granted, top-ups, clawed back, consumed, refunded, expired',
    description: 'groupBy total, day or account. JSON, or CSV with `format=csv` or `Accept: text/csv`.',
    tag: 'Reports',
    query: QUERIES['credits'],
    responses: { 200: { description: 'The report', schema: creditsReportSchema, csv: true } },
  })
  async credits(@Query() query: unknown, @Headers('accept') accept: string | undefined, @Res({ passthrough: true }) reply: FastifyReply) {
    const q = parseReportQuery('credits', query, this.clock.now());
    return send(reply, q.format, accept, await this.reports.credits(q.period, q.groupBy));
  }

  @Get('seats')
  @Doc({
    id: 'seatsReport',
    summary: 'Team accounts: active seats, Stripe quantity, expected and invoiced recurring revenue',
    description: 'JSON, or CSV with `format=csv` or `Accept: text/csv`.',
    tag: 'Reports',
    query: QUERIES['seats'],
    responses: { 200: { description: 'The report', schema: seatsReportSchema, csv: true } },
  })
  async seats(@Query() query: unknown, @Headers('accept') accept: string | undefined, @Res({ passthrough: true }) reply: FastifyReply) {
    const q = parseReportQuery('seats', query, this.clock.now());
    return send(reply, q.format, accept, await this.reports.seats(q.period, this.clock.now()));
  }

  @Get('spend-limits')
  @Doc({
    id: 'spendLimitsReport',
    summary: 'Spend-limit notifications and runtime terminations',
    description: 'JSON, or CSV with `format=csv` or `Accept: text/csv`.',
    tag: 'Reports',
    query: QUERIES['spend-limits'],
    responses: { 200: { description: 'The report', schema: spendLimitsReportSchema, csv: true } },
  })
  async spendLimits(
    @Query() query: unknown,
    @Headers('accept') accept: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const q = parseReportQuery('spend-limits', query, this.clock.now());
    return send(reply, q.format, accept, await this.reports.spendLimits(q.period));
  }

  @Get('reconciliation')
  @Doc({
    id: 'reconciliationReport',
    summary: 'Seat discrepancies between Stripe and the members table',
    description: 'JSON, or CSV with `format=csv` or `Accept: text/csv`.',
    tag: 'Reports',
    query: QUERIES['reconciliation'],
    responses: { 200: { description: 'The report', schema: reconciliationReportSchema, csv: true } },
  })
  async reconciliation(
    @Query() query: unknown,
    @Headers('accept') accept: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const q = parseReportQuery('reconciliation', query, this.clock.now());
    return send(reply, q.format, accept, await this.reports.reconciliation(q.period, this.clock.now()));
  }

  @Get('top-consumers')
  @Doc({
    id: 'topConsumersReport',
    summary: 'The accounts that consumed the most credits',
    description: 'from and to are whole UTC hours; limit defaults to 10. JSON, or CSV with `format=csv` or `Accept: text/csv`.',
    tag: 'Reports',
    query: QUERIES['top-consumers'],
    responses: { 200: { description: 'The report', schema: topConsumersReportSchema, csv: true } },
  })
  async topConsumers(
    @Query() query: unknown,
    @Headers('accept') accept: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const q = parseReportQuery('top-consumers', query, this.clock.now());
    return send(reply, q.format, accept, await this.reports.topConsumers(q.period, q.limit));
  }

  @Get('ancillary')
  @Doc({
    id: 'ancillaryReport',
    summary: 'Ancillary usage by account and kind: snapshots, volumes, egress; priced or unpriced',
    description:
      'Usage metered in [from, to) (storage hours, egress reports): quantity, credits due, charged and unpaid. JSON, or CSV with `format=csv` or `Accept: text/csv`.',
    tag: 'Reports',
    query: QUERIES['ancillary'],
    responses: { 200: { description: 'The report', schema: ancillaryReportSchema, csv: true } },
  })
  async ancillary(@Query() query: unknown, @Headers('accept') accept: string | undefined, @Res({ passthrough: true }) reply: FastifyReply) {
    const q = parseReportQuery('ancillary', query, this.clock.now());
    return send(reply, q.format, accept, await this.reports.ancillary(q.period));
  }
}

function send(reply: FastifyReply, format: 'json' | 'csv' | undefined, accept: string | undefined, report: Report): Report | string {
  if (!wantsCsv(format, accept)) return report;
  const name = `${report.report}_${report.from.slice(0, 10)}_${report.to.slice(0, 10)}.csv`;
  void reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${name}"`);
  return toCsv(report);
}
