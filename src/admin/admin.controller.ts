import { All, Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiKeyFailures } from 'src/accounts/auth/failure-limiter';
import { Public } from 'src/common/auth/auth.decorators';
import { ApiKeysService } from 'src/accounts/auth/api-keys.service';
import { toBillingException } from 'src/common/errors/billing-exception.filter';
import { BillingException } from 'src/common/errors/billing.exception';
import { noteErrorCode } from 'src/common/http/request-notes';
import { Clock } from 'src/infra/clock/clock';
import { PlanCatalog } from 'src/plan-catalog/plan-catalog';
import { parseReportQuery } from 'src/reports/report-query';
import { ReportsService, type Period, type Report } from 'src/reports/reports.service';
import { toCsv } from 'src/reports/to-csv';
import { AdminAuth, CONSOLE_SCOPES, formOf } from './admin-auth';
import { csrfValid, SESSION_COOKIE, SESSION_TTL_MS, signSession } from './admin-session';
import { errorPage, loginPage, shell } from './render';
import { readPages } from './paging';
import { PAGED_TABLES, refusedReportsPage, reportsPage } from './reports-page';
import { invalidFindings } from './form-fields';
import { ConsoleErrorFilter } from './console-error.filter';

/**
 * The admin console's sign-in and reports: server-rendered HTML, no build step. Signing in posts an
 * API key (admin or reports scope) once; the browser then holds an HttpOnly, SameSite=Strict cookie
 * with a signed session naming the key's id, never the key.
 */
@Controller('admin')
@UseFilters(ConsoleErrorFilter)
@Public()
export class AdminController {
  constructor(
    private readonly keys: ApiKeysService,
    private readonly reports: ReportsService,
    private readonly auth: AdminAuth,
    private readonly clock: Clock,
    private readonly catalog: PlanCatalog,
    private readonly failures: ApiKeyFailures,
  ) {}

  @Get('login')
  login(@Res({ passthrough: true }) reply: FastifyReply): string {
    void reply.header('content-type', 'text/html; charset=utf-8');
    return loginPage();
  }

  @Post('login')
  @HttpCode(303)
  async signIn(
    @Body() body: unknown,
    @Headers('x-forwarded-proto') proto: string | undefined,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    // The same budget of failed keys per client as the API's (a guess here counts there, and back).
    const wait = await this.failures.retryAfter(request.ip);
    if (wait > 0) {
      void reply.code(429).header('retry-after', String(wait)).header('content-type', 'text/html; charset=utf-8');
      return loginPage(`Too many failed sign-ins from this address: try again in ${wait} s.`);
    }
    const key =
      typeof body === 'object' && body !== null && typeof (body as { key?: unknown }).key === 'string'
        ? (body as { key: string }).key.trim()
        : '';
    const principal = key ? await this.keys.authenticate(key) : null;
    const live = principal ? await this.keys.liveKey(principal.keyId) : null;
    if (!principal || !live) await this.failures.fail(request.ip);
    if (!principal || !live || !principal.scopes.some((s) => CONSOLE_SCOPES.includes(s))) {
      void reply.code(401).header('content-type', 'text/html; charset=utf-8');
      return loginPage(principal ? 'This key has neither the admin nor the reports scope.' : 'Unknown or revoked API key.');
    }
    // Signed in after the key's last sign-out, even within the same millisecond.
    const signedIn = Math.max(this.clock.now().getTime(), (live.consoleSignedOutAt?.getTime() ?? 0) + 1);
    const expiresAt = signedIn + SESSION_TTL_MS;
    const cookie = [
      `${SESSION_COOKIE}=${signSession(principal.keyId, live.hash, expiresAt)}`,
      'Path=/admin',
      'HttpOnly',
      'SameSite=Strict',
      `Max-Age=${SESSION_TTL_MS / 1000}`,
      ...(proto === 'https' ? ['Secure'] : []),
    ].join('; ');
    void reply.header('set-cookie', cookie).header('location', '/admin/accounts');
    return '';
  }

  /** Signs out: the cookie is cleared, and every session of the key signed in until now ends on the server too. */
  @Post('logout')
  @HttpCode(303)
  async logout(
    @Body() body: unknown,
    @Headers('cookie') cookies: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    const viewer = await this.auth.viewer(cookies);
    // Only a form of the session itself signs it out (its CSRF token): a forged post cannot end it.
    if (viewer && csrfValid(viewer.csrf, formOf(body).csrf)) await this.keys.consoleSignedOut(viewer.keyId, this.clock.now());
    void reply
      .header('set-cookie', `${SESSION_COOKIE}=; Path=/admin; HttpOnly; SameSite=Strict; Max-Age=0`)
      .header('location', '/admin/login');
    return '';
  }

  /** The reports: a bad period is a 400 page naming every finding, as the JSON API's 400. */
  @Get()
  dashboard(
    @Query() query: unknown,
    @Headers('cookie') cookies: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    return this.auth.page(reply, cookies, async (viewer) => {
      const now = this.clock.now();
      const { rest, pages, findings } = readPages(PAGED_TABLES, query);
      let period: Period | undefined;
      try {
        period = parseReportQuery('usage', { ...rest, groupBy: 'environment' }, now).period;
      } catch (error) {
        const refused = invalidFindings(error);
        if (!refused) throw error;
        findings.push(...refused);
      }
      if (!period || findings.length > 0) {
        // What was typed comes back in the form, each finding beside its field.
        const error = BillingException.invalid(findings);
        void reply.code(400);
        noteErrorCode(reply.request, error.code);
        return shell('Reports: please correct the period', viewer, 'reports', refusedReportsPage(formOf(query), error));
      }
      const length = period.to.getTime() - period.from.getTime();
      const previous = { from: new Date(period.from.getTime() - length), to: period.from };
      const [credits, creditsBefore, usage, usageBefore, top, seats, byEnv, byClass, spend, reconciliation] = await Promise.all([
        this.reports.credits(period, 'day'),
        this.reports.credits(previous, 'total'),
        this.reports.usage(period, 'account'),
        this.reports.usage(previous, 'account'),
        this.reports.topConsumers(period, 10),
        this.reports.seats(period, now),
        this.reports.usage(period, 'environment'),
        this.reports.usageByClass(period),
        this.reports.spendLimits(period),
        this.reports.reconciliation(period, now),
      ]);
      const body = reportsPage({
        period,
        previous,
        credits,
        creditsBefore,
        usage,
        usageBefore,
        top,
        seats,
        byEnv,
        byClass,
        spend,
        reconciliation,
        centsPerCredit: this.catalog.centsPerCredit,
        pages,
      });
      return shell(`Reports ${period.from.toISOString()} to ${period.to.toISOString()}`, viewer, 'reports', body);
    });
  }

  /** The same reports as CSV for the signed-in browser (the API needs a bearer key). */
  @Get('reports/:file')
  async csv(
    @Param('file') file: string,
    @Query() query: unknown,
    @Headers('cookie') cookies: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    const viewer = await this.auth.signedIn(reply, cookies);
    if (!viewer) return '';
    const name = file.replace(/\.csv$/, '');
    const now = this.clock.now();
    let report: Report;
    try {
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
          report = await this.reports.seats(parseReportQuery('seats', query, now).period, now);
          break;
        case 'spend-limits':
          report = await this.reports.spendLimits(parseReportQuery('spend-limits', query, now).period);
          break;
        case 'reconciliation':
          report = await this.reports.reconciliation(parseReportQuery('reconciliation', query, now).period, now);
          break;
        case 'ancillary':
          report = await this.reports.ancillary(parseReportQuery('ancillary', query, now).period);
          break;
        default:
          throw BillingException.notFound(`Report ${file}`);
      }
    } catch (error) {
      const e = toBillingException(error);
      void reply.code(e.status).header('content-type', 'text/html; charset=utf-8');
      return errorPage(e, viewer, '/admin');
    }
    void reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${name}.csv"`);
    return toCsv(report);
  }

  /** Any other path under /admin, by any method: the console's 404 page (signed out, the sign-in page, as for every page). */
  @All('*')
  unknown(
    @Req() request: FastifyRequest,
    @Headers('cookie') cookies: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    return this.auth.page(reply, cookies, () => Promise.reject(BillingException.notFound(`Page ${request.url.split('?')[0]}`)));
  }
}
