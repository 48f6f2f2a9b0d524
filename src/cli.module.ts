import { Module, type DynamicModule } from '@nestjs/common';
import { ApiKeysService } from './accounts/auth/api-keys.service';
import { AuditModule } from './audit/audit.module';
import { loadConfig, type AppConfig } from './common/config/config';
import { ConfigModule } from './common/config/config.module';
import { DatabaseModule } from './common/database/database.module';
import { ClockModule } from './infra/clock/clock.module';
import { LedgerService } from './ledger/ledger.service';

/**
 * The CLI's configuration: the service's, read when called (not at import, so a usage error needs
 * none), except that the CLI never migrates the database: it refuses one not at this build's schema.
 */
export function cliConfig(): AppConfig {
  const config = loadConfig();
  return { ...config, database: { ...config.database, migrate: false } };
}

/** What the CLI needs: configuration, the database, the audit log, the ledger and API keys; no HTTP, no Kafka. */
@Module({})
export class CliModule {
  static forRoot(): DynamicModule {
    return {
      module: CliModule,
      imports: [ConfigModule.forRoot(cliConfig()), ClockModule, DatabaseModule, AuditModule],
      providers: [ApiKeysService, LedgerService],
    };
  }
}
