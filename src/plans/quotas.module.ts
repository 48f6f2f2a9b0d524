import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module';
import { LedgerModule } from '../ledger/ledger.module';
import { AllowancesService } from './allowances.service';
import { MonthlyResetScheduler } from './monthly-reset.scheduler';
import { PlanAdminService } from './plan-admin.service';
import { PlanLaunchGuard } from './plan-launch-guard';
import { PlansController } from './plans.controller';
import { PlanCatalogModule } from './plan-catalog.module';
import { QuotasService } from './quotas.service';

/**
 * Plans at work: quotas at reservation time (PlanLaunchGuard, the metering module's LaunchGuard),
 * the period allowances and the monthly reset, the plan admin API and the wallet's `runs`.
 */
@Module({
  imports: [PlanCatalogModule, LedgerModule, AccountsModule],
  controllers: [PlansController],
  providers: [AllowancesService, QuotasService, PlanLaunchGuard, PlanAdminService, MonthlyResetScheduler],
  exports: [PlanCatalogModule, AllowancesService, QuotasService, PlanLaunchGuard, PlanAdminService],
})
export class QuotasModule {}
