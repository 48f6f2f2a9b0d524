import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { AccountsModule } from './accounts/accounts.module';
import { ConfigModule } from './common/config/config.module';
import type { AppConfig } from './common/config/config';
import { DatabaseModule } from './common/database/database.module';
import { BillingExceptionFilter } from './common/errors/billing-exception.filter';
import { HealthModule } from './health/health.module';
import { ClockModule } from './infra/clock/clock.module';
import { KafkaModule } from './infra/kafka/kafka.module';
import { MessagingModule } from './messaging/messaging.module';
import { MeteringModule } from './metering/metering.module';

@Module({})
export class AppModule {
  static forRoot(config?: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        ClockModule,
        DatabaseModule,
        KafkaModule,
        HealthModule,
        MessagingModule,
        AccountsModule,
        MeteringModule,
      ],
      providers: [{ provide: APP_FILTER, useClass: BillingExceptionFilter }],
    };
  }
}
