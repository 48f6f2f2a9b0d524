// Owns: spend_limits, spend_limit_alerts.
import { Module } from '@nestjs/common';
import { AuditModule } from 'src/audit/audit.module';
import { LedgerModule } from 'src/ledger/ledger.module';
import { SpendLimitsController } from './spend-limits.controller';
import { SpendLimitReads } from './spend-limit-reads';
import { SpendLimitsService } from './spend-limits.service';
import { SuspensionService } from './suspension.service';

@Module({
  imports: [LedgerModule, AuditModule],
  controllers: [SpendLimitsController],
  providers: [SpendLimitsService, SpendLimitReads, SuspensionService],
  exports: [SpendLimitsService, SpendLimitReads],
})
export class SpendLimitsModule {}
