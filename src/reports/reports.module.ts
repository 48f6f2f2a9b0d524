import { Module } from '@nestjs/common';
import { PlansModule } from '../plans/plans.module';
import { ReportsController } from './reports.controller';
import { ReportsService } from './reports.service';
import { AccountDirectory } from './account-directory';

/** Admin reports over the rollups, the ledger and the seat tables (`/v1/reports/…`). */
@Module({
  imports: [PlansModule],
  controllers: [ReportsController],
  providers: [ReportsService, AccountDirectory],
  exports: [ReportsService, AccountDirectory],
})
export class ReportsModule {}
