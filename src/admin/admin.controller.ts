import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { FastifyReply } from 'fastify';
import { DataSource } from 'typeorm';
import { Public } from '../accounts/auth/auth.decorators';
import { ApiKeysService } from '../accounts/auth/api-keys.service';
import { rows } from '../common/database/transaction';
import { Clock } from '../infra/clock/clock';
import { parseReportQuery } from '../reports/report-query';
import { ReportsService, toCsv, type Report } from '../reports/reports.service';
import { parseSession, readCookie, SESSION_COOKIE, SESSION_TTL_MS, sessionValid, signSession } from './admin-session';
import { barChart, esc, loginPage, page, table } from './render';

const ALLOWED = ['admin', 'reports'];

/**
 * The admin dashboard: server-rendered HTML with inline SVG charts, no build step. Signing in posts
 * an API key (admin or reports scope) once; the browser then holds an HttpOnly cookie with a signed
 * session naming the key's id, never the key.
 */
@Controller('admin')
@Public()
export class AdminController {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly keys: ApiKeysService,
    private readonly reports: ReportsService,
    private readonly clock: Clock,
  ) {}

  @Get('login')
  login(@Res({ passthrough: true }) reply: FastifyReply): string {
    void reply.header('content-type', 'text/html; charset=utf-8');
    return loginPage();
  }

  @Post('login')
  @HttpCode(303)
  async signIn(@Body() body: unknown, @Headers('x-forwarded-proto') proto: string | undefined, @Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    const key = typeof body === 'object' && body !== null && typeof (body as { key?: unknown }).key === 'string' ? (body as { key: string }).key.trim() : '';
    const principal = key ? await this.keys.authenticate(key) : null;
    if (!principal || !principal.scopes.some((s) => ALLOWED.includes(s))) {
      void reply.code(401).header('content-type', 'text/html; charset=utf-8');
      return loginPage(principal ? 'This key has neither the admin nor the reports scope.' : 'Unknown or revoked API key.');
    }
    const hash = await this.keyHash(principal.keyId);
    const expiresAt = this.clock.now().getTime() + SESSION_TTL_MS;
    const cookie = [
      `${SESSION_COOKIE}=${signSession(principal.keyId, hash!, expiresAt)}`,
      'Path=/admin',
      'HttpOnly',
      'SameSite=Strict',
      `Max-Age=${SESSION_TTL_MS / 1000}`,
      ...(proto === 'https' ? ['Secure'] : []),
    ].join('; ');
    void reply.header('set-cookie', cookie).header('location', '/admin');
    return '';
  }

  @Post('logout')
  @HttpCode(303)
  logout(@Res({ passthrough: true }) reply: FastifyReply): string {
    void reply.header('set-cookie', `${SESSION_COOKIE}=; Path=/admin; HttpOnly; SameSite=Strict; Max-Age=0`).header('location', '/admin/login');
    return '';
  }

  @Get()
  async dashboard(@Query() query: unknown, @Headers('cookie') cookies: string | undefined, @Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    const keyId = await this.session(cookies);
    if (!keyId) {
      void reply.code(303).header('location', '/admin/login');
      return '';
    }
    void reply.header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store');
    const now = this.clock.now();
    const q = parseReportQuery('usage', { ...(query as object), groupBy: 'environment' }, now);
    const period = q.period;
    const [credits, top, seats, byEnv, spend, reconciliation] = await Promise.all([
      this.reports.credits(period, 'day'),
      this.reports.topConsumers(period, 10),
      this.reports.seats(period),
      this.reports.usage(period, 'environment'),
      this.reports.spendLimits(period),
      this.reports.reconciliation(period, now),
    ]);
    const micros = (s: unknown) => Number(String(s)) || 0;
    const range = `from=${encodeURIComponent(period.from.toISOString())}&to=${encodeURIComponent(period.to.toISOString())}`;
    const csv = (name: string, extra = '') => `<a class="csv" href="/admin/reports/${name}.csv?${range}${extra}">CSV</a>`;
    const t = credits.totals ?? {};
    const totals = (['granted', 'topUps', 'consumed', 'refunded', 'expired', 'clawedBack', 'net'] as const)
      .map((k) => `<div><b data-total="${k}">${esc(t[k])}</b>${esc(k)}</div>`)
      .join('');
    const body = `<header><h1>Billing admin</h1><span>${esc(period.from.toISOString())} → ${esc(period.to.toISOString())} · key ${esc(keyId)}</span>
<form method="post" action="/admin/logout"><button type="submit">Sign out</button></form></header><main>
<section><form method="get" action="/admin">From <input name="from" value="${esc(period.from.toISOString())}" size="24"> to <input name="to" value="${esc(period.to.toISOString())}" size="24"> <button type="submit">Show</button> <small>(UTC, whole hours)</small></form></section>
<section id="credits"><h2>Credits${csv('credits', '&groupBy=day')}</h2><div class="totals">${totals}</div>
${barChart('chart-credits', 'Credits per day: granted (incl. top-ups) and consumed', credits.items.map((i) => String(i.day)), [
      { name: 'granted', color: '#4c8bf5', values: credits.items.map((i) => micros(i.granted) + micros(i.topUps)) },
      { name: 'consumed', color: '#f28b30', values: credits.items.map((i) => micros(i.consumed)) },
    ], ' credits')}</section>
<section id="top"><h2>Top accounts${csv('top-consumers')}</h2>
${barChart('chart-top', 'Credits consumed by the top 10 accounts', top.items.map((i) => String(i.account)), [{ name: 'credits', color: '#2e9e6b', values: top.items.map((i) => micros(i.credits)) }], ' credits')}
${table('table-top', top)}</section>
<section id="seats"><h2>Team seats vs Stripe${csv('seats')}</h2>
${barChart('chart-seats', 'Active seats and Stripe seat quantity per Team account', seats.items.map((i) => String(i.account)), [
      { name: 'active seats', color: '#6a5acd', values: seats.items.map((i) => Number(i.seats)) },
      { name: 'Stripe quantity', color: '#c0c0c0', values: seats.items.map((i) => Number(i.stripeQuantity ?? 0)) },
    ])}
<p>Expected MRR $${esc(((Number(seats.totals?.expectedMrrCents) || 0) / 100).toFixed(2))} · Stripe MRR $${esc(((Number(seats.totals?.stripeMrrCents) || 0) / 100).toFixed(2))} · invoiced in period $${esc(((Number(seats.totals?.invoicedCents) || 0) / 100).toFixed(2))}</p>
${table('table-seats', seats)}</section>
<section id="usage"><h2>Usage by environment${csv('usage', '&groupBy=environment')}</h2>${table('table-usage', byEnv)}</section>
<section id="spend"><h2>Spend limits and terminations${csv('spend-limits')}</h2>${table('table-spend', spend)}</section>
<section id="reconciliation"><h2>Seat reconciliation${csv('reconciliation')}</h2>${table('table-reconciliation', reconciliation)}</section>
</main>`;
    return page('Billing admin', body);
  }

  /** The same reports as CSV for the signed-in browser (the API needs a bearer key). */
  @Get('reports/:file')
  async csv(@Param('file') file: string, @Query() query: unknown, @Headers('cookie') cookies: string | undefined, @Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    if (!(await this.session(cookies))) {
      void reply.code(303).header('location', '/admin/login');
      return '';
    }
    const name = file.replace(/\.csv$/, '');
    const now = this.clock.now();
    let report: Report;
    switch (name) {
      case 'usage': {
        const q = parseReportQuery('usage', query, now);
        report = await this.reports.usage(q.period, q.groupBy);
        break;
      }
      case 'credits': {
        const q = parseReportQuery('credits', query, now);
        report = await this.reports.credits(q.period, q.groupBy);
        break;
      }
      case 'top-consumers': {
        const q = parseReportQuery('top-consumers', query, now);
        report = await this.reports.topConsumers(q.period, q.limit);
        break;
      }
      case 'seats':
        report = await this.reports.seats(parseReportQuery('seats', query, now).period);
        break;
      case 'spend-limits':
        report = await this.reports.spendLimits(parseReportQuery('spend-limits', query, now).period);
        break;
      case 'reconciliation':
        report = await this.reports.reconciliation(parseReportQuery('reconciliation', query, now).period, now);
        break;
      default:
        void reply.code(404).header('content-type', 'text/plain');
        return 'unknown report';
    }
    void reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${name}.csv"`);
    return toCsv(report);
  }

  /** The key id of a valid session cookie, or null. */
  private async session(cookies: string | undefined): Promise<string | null> {
    const session = parseSession(readCookie(cookies, SESSION_COOKIE));
    if (!session) return null;
    const hash = await this.keyHash(session.keyId);
    return hash && sessionValid(session, hash, this.clock.now().getTime()) ? session.keyId : null;
  }

  /** The stored hash of a key that is not revoked and may read reports. */
  private async keyHash(keyId: string): Promise<string | null> {
    const [row] = await rows<{ key_hash: string }>(
      this.ds,
      `SELECT key_hash FROM api_keys WHERE id = $1 AND revoked_at IS NULL AND scopes && $2::text[]`,
      [keyId, ALLOWED],
    );
    return row?.key_hash ?? null;
  }
}
