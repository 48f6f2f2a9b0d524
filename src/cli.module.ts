import { Module, type DynamicModule } from '@nestjs/common';
import { ApiKeysService } from './accounts/auth/api-keys.service';
import { AuditModule } from './audit/audit.module';
import { ConfigModule } from './common/config/config.module';
import { DatabaseModule } from './common/database/database.module';
import { ClockModule } from './infra/clock/clock.module';
import { LedgerService } from './ledger/ledger.service';

/** What the CLI needs: configuration, the database, the audit log, the ledger and API keys; no HTTP, no Kafka. */
@Module({})
export class CliModule {
  /** Reads the configuration when called (not at import), so a usage error needs none. */
  static forRoot(): DynamicModule {
    return {
      module: CliModule,
      imports: [ConfigModule.forRoot(), ClockModule, DatabaseModule, AuditModule],
      providers: [ApiKeysService, LedgerService],
    };
  }
}
