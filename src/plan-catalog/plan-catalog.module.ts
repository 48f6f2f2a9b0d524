import { Module } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { PlanCatalog } from './plan-catalog';

/**
 * Provides the `PlanCatalog`, loaded and validated from AppConfig.files.plans at startup (a bad file
 * stops the service with a message naming the bad path). Needs the global ConfigModule.
 */
@Module({
  providers: [
    {
      provide: PlanCatalog,
      useFactory: (config: AppConfig) => PlanCatalog.fromFile(config.files.plans),
      inject: [APP_CONFIG],
    },
  ],
  exports: [PlanCatalog],
})
export class PlanCatalogModule {}
