// Owns: usage_rollups, usage_daily_rollups, usage_monthly_rollups, usage_account_hourly_rollups, usage_account_daily_rollups, usage_account_monthly_rollups.
// Metering adds to them through usage-rollups.ts.
import { Module } from '@nestjs/common';
import { PlanCatalogModule } from 'src/plan-catalog/plan-catalog.module';
import { ReportsController } from './reports.controller';
import { ReportsService } from './reports.service';
import { AccountDirectory } from './account-directory';

/** Admin reports over the rollups, the ledger and the seat tables (`/v1/reports/…`). */
@Module({
  imports: [PlanCatalogModule],
  controllers: [ReportsController],
  providers: [ReportsService, AccountDirectory],
  exports: [ReportsService, AccountDirectory],
})
export class ReportsModule {}
