import { Module } from '@nestjs/common';
import { AccountsModule } from 'src/accounts/accounts.module';
import { LedgerModule } from 'src/ledger/ledger.module';
import { AllowancesService } from './allowances.service';
import { MonthlyResetScheduler } from './monthly-reset.scheduler';
import { PlanAdminService } from './plan-admin.service';
import { PlanReads, QuotaReads } from './plan-reads';
import { PlansController } from './plans.controller';
import { PlanCatalogModule } from 'src/plan-catalog/plan-catalog.module';
import { QuotasService } from './quotas.service';

/**
 * Plans at work: the reads admission checks plans and quotas on (PlanReads, QuotaReads), the
 * period allowances and the monthly reset, the plan admin API and the wallet's `runs`.
 */
@Module({
  imports: [PlanCatalogModule, LedgerModule, AccountsModule],
  controllers: [PlansController],
  providers: [AllowancesService, QuotasService, PlanReads, QuotaReads, PlanAdminService, MonthlyResetScheduler],
  exports: [PlanCatalogModule, AllowancesService, QuotasService, PlanReads, QuotaReads, PlanAdminService],
})
export class PlansModule {}
