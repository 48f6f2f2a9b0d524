// Owns: wallets, grants, holds, hold_allocations, ledger_transactions, ledger_entries, ledger_months.
// Every credit movement goes through LedgerService (the monthly reset through its bulk grant).
import { Module } from '@nestjs/common';
import { GrantsController } from './grants.controller';
import { LedgerFlowMetrics } from './ledger-flows';
import { LedgerReconcileJob } from './ledger-reconcile.job';
import { LedgerService } from './ledger.service';
import { WalletController } from './wallet.controller';
import { WalletExtensions } from './wallet-extensions';

@Module({
  controllers: [WalletController, GrantsController],
  providers: [LedgerService, WalletExtensions, LedgerReconcileJob, LedgerFlowMetrics],
  exports: [LedgerService, WalletExtensions],
})
export class LedgerModule {}
