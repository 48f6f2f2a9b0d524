import { Module } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { PlanCatalog } from './plan-catalog';

/** The catalog the service read before it started (src/config-files.ts), when it did. */
export const PLAN_CATALOG_READ = Symbol('PLAN_CATALOG_READ');

/**
 * Provides the `PlanCatalog`: the one read before the start when there is one, else loaded and
 * validated from AppConfig.files.plans now (a bad file stops the start with a message naming the bad
 * path). Needs the global ConfigModule.
 */
@Module({
  providers: [
    {
      provide: PlanCatalog,
      useFactory: (config: AppConfig, read?: PlanCatalog) => read ?? PlanCatalog.fromFile(config.files.plans),
      inject: [APP_CONFIG, { token: PLAN_CATALOG_READ, optional: true }],
    },
  ],
  exports: [PlanCatalog],
})
export class PlanCatalogModule {}
