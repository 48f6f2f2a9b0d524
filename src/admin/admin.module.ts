import { Module, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { AccountsModule } from 'src/accounts/accounts.module';
import { LedgerModule } from 'src/ledger/ledger.module';
import { MembersModule } from 'src/members/members.module';
import { MessagingModule } from 'src/messaging/messaging.module';
import { MeteringModule } from 'src/metering/metering.module';
import { PlanCatalogModule } from 'src/plan-catalog/plan-catalog.module';
import { PlansModule } from 'src/plans/plans.module';
import { ReportsModule } from 'src/reports/reports.module';
import { SpendLimitsModule } from 'src/spend-limits/spend-limits.module';
import { SuspensionService } from 'src/spend-limits/suspension.service';
import { StatementsModule } from 'src/statements/statements.module';
import { StripeModule } from 'src/stripe/stripe.module';
import { AdminAccountsController } from './accounts.controller';
import { AdminActionsController } from './actions.controller';
import { AdminAuth } from './admin-auth';
import { CONSOLE_HEADERS, isConsolePath } from './console-error.filter';
import { AdminController } from './admin.controller';
import { AdminHealthController } from './health.controller';
import { AdminStatementsController } from './statements.controller';

/** The admin console at /admin (HTML, signed in by API key): accounts, actions, reports, system health. */
@Module({
  imports: [
    AccountsModule,
    ReportsModule,
    LedgerModule,
    PlanCatalogModule,
    PlansModule,
    MeteringModule,
    SpendLimitsModule,
    MembersModule,
    StripeModule,
    MessagingModule,
    StatementsModule,
  ],
  controllers: [AdminController, AdminAccountsController, AdminActionsController, AdminHealthController, AdminStatementsController],
  // SuspensionService is not exported by its module; it is stateless, so an instance here is the same service (as in StripeModule).
  providers: [AdminAuth, SuspensionService],
})
export class AdminModule implements OnModuleInit {
  constructor(private readonly adapter: HttpAdapterHost) {}

  /**
   * The console's forms post application/x-www-form-urlencoded, which Fastify does not parse by
   * itself; and every console answer (pages, errors, CSV downloads) says it is not to be framed,
   * sniffed, cached or given scripts (the console has none).
   */
  onModuleInit(): void {
    const fastify = this.adapter.httpAdapter?.getInstance<FastifyInstance>();
    if (!fastify) return;
    fastify.addHook('onSend', (request, reply, payload, done) => {
      if (isConsolePath(request.url)) {
        void reply.headers(CONSOLE_HEADERS);
        if (!reply.hasHeader('cache-control')) void reply.header('cache-control', 'no-store');
      }
      done(null, payload);
    });
    if (fastify.hasContentTypeParser('application/x-www-form-urlencoded')) return;
    fastify.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_req, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(String(body))));
    });
  }
}
