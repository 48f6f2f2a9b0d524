import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { AccountsModule } from './accounts/accounts.module';
import { AncillaryModule } from './ancillary/ancillary.module';
import { StatementsModule } from './statements/statements.module';
import { AuditModule } from './audit/audit.module';
import { ConfigModule } from './common/config/config.module';
import type { AppConfig } from './common/config/config';
import { ConfigFilesModule, type ConfigFiles } from './config-files';
import { DatabaseModule } from './common/database/database.module';
import { ExtensionsModule } from './extensions.module';
import { ShutdownSequence } from './common/lifecycle/shutdown-sequence';
import { BillingExceptionFilter } from './common/errors/billing-exception.filter';
import { InputPipe } from './common/http/input.pipe';
import { HealthModule } from './health/health.module';
import { ClockModule } from './infra/clock/clock.module';
import { KafkaModule } from './infra/kafka/kafka.module';
import { LedgerModule } from './ledger/ledger.module';
import { JobsModule } from './jobs/jobs.module';
import { MessagingModule } from './messaging/messaging.module';
import { MeteringModule } from './metering/metering.module';
import { ReportsModule } from './reports/reports.module';
import { AdminModule } from './admin/admin.module';
import { MembersModule } from './members/members.module';
import { StripeModule } from './stripe/stripe.module';

@Module({})
export class AppModule {
  /** `files`: the plan catalog and rate card already read (main.ts), not read again; else each module reads its own. */
  static forRoot(config?: AppConfig, files?: ConfigFiles): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        ...(files ? [ConfigFilesModule.forRoot(files)] : []),
        ClockModule,
        ScheduleModule.forRoot(),
        JobsModule,
        DatabaseModule,
        KafkaModule,
        HealthModule,
        MessagingModule,
        AuditModule,
        LedgerModule,
        AccountsModule,
        MeteringModule,
        AncillaryModule,
        StatementsModule,
        ReportsModule,
        AdminModule,
        MembersModule,
        StripeModule,
        ExtensionsModule,
      ],
      providers: [{ provide: APP_FILTER, useClass: BillingExceptionFilter }, { provide: APP_PIPE, useClass: InputPipe }, ShutdownSequence],
    };
  }
}
