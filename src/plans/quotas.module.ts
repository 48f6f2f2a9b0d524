import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module';
import { LedgerModule } from '../ledger/ledger.module';
import { AllowancesService } from './allowances.service';
import { MonthlyResetScheduler } from './monthly-reset.scheduler';
import { PlanAdminService } from './plan-admin.service';
import { PlanLaunchGuard } from '../reservations/admission-checks';
import { PlansController } from './plans.controller';
import { PlansModule } from './plans.module';
import { QuotasService } from './quotas.service';

/**
 * Plans at work: quotas at reservation time (PlanLaunchGuard, the metering module's LaunchGuard),
 * the period allowances and the monthly reset, the plan admin API and the wallet's `runs`.
 */
@Module({
  imports: [PlansModule, LedgerModule, AccountsModule],
  controllers: [PlansController],
  providers: [AllowancesService, QuotasService, PlanLaunchGuard, PlanAdminService, MonthlyResetScheduler],
  exports: [PlansModule, AllowancesService, QuotasService, PlanLaunchGuard, PlanAdminService],
})
export class QuotasModule {}
