import { Global, Module, type DynamicModule } from '@nestjs/common';
import { ConfigError, type AppConfig } from './common/config/config';
import { PlanCatalog } from './plan-catalog/plan-catalog';
import { PLAN_CATALOG_READ } from './plan-catalog/plan-catalog.module';
import { RATE_CARD_READ } from './pricing/pricing.module';
import { loadRateCardFile, type RateCardVersion } from './pricing/rate-card';

/** The plan catalog and the rate card, read and validated. */
export interface ConfigFiles {
  plans: PlanCatalog;
  rateCard: RateCardVersion[];
}

/**
 * Reads the plan catalog and the rate card before anything starts: a bad file is a configuration
 * error like a bad variable, and the ConfigError names every bad file at once.
 */
export function readConfigFiles(files: AppConfig['files']): ConfigFiles {
  const problems: string[] = [];
  const read = <T>(load: () => T): T | undefined => {
    try {
      return load();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(...error.problems);
      return undefined;
    }
  };
  const plans = read(() => PlanCatalog.fromFile(files.plans));
  const rateCard = read(() => loadRateCardFile(files.rateCard));
  if (!plans || !rateCard) throw new ConfigError(problems);
  return { plans, rateCard };
}

/** Gives what readConfigFiles read to PlanCatalogModule and PricingModule, which then do not read the files again. */
@Global()
@Module({})
export class ConfigFilesModule {
  static forRoot(files: ConfigFiles): DynamicModule {
    return {
      module: ConfigFilesModule,
      providers: [
        { provide: PLAN_CATALOG_READ, useValue: files.plans },
        { provide: RATE_CARD_READ, useValue: files.rateCard },
      ],
      exports: [PLAN_CATALOG_READ, RATE_CARD_READ],
    };
  }
}
