import { Global, Module } from '@nestjs/common';
import { PLAN_SET_HOOKS, type PlanSetHook } from './accounts/account-hooks';
import { AncillaryModule, ancillaryEventHandler, pausedMemoryHook } from './ancillary/ancillary.module';
import { AncillaryUsageService } from './ancillary/ancillary-usage.service';
import { Clock } from './infra/clock/clock';
import { LedgerModule } from './ledger/ledger.module';
import { LedgerService } from './ledger/ledger.service';
import { SEAT_HISTORY_HOOKS, type SeatHistoryHook } from './members/seat-history-hooks';
import { WALLET_EXTENSIONS, type WalletExtension } from './ledger/wallet-extensions';
import { EXTRA_EVENT_HANDLERS, type ExtraEventHandler } from './metering/event-extensions';
import { SETTLEMENT_HOOKS, type SettlementHook } from './metering/settlement-hooks';
import { PlanAdminService } from './plans/plan-admin.service';
import { PlansModule } from './plans/plans.module';
import { QuotasService } from './plans/quotas.service';
import { SpendLimitsModule } from './spend-limits/spend-limits.module';
import { SpendLimitsService } from './spend-limits/spend-limits.service';
import { InvoiceSeats } from './stripe/invoice-records';
import { seatChangesHook } from './stripe/seat-pushes';
import { StripeModule } from './stripe/stripe.module';

/**
 * The extension points of the lower modules, filled in one place by the higher ones: what the wallet
 * view shows besides the ledger (spend limits, runs), what a new account or plan takes (its wallet, its allowance), what a
 * settlement does besides the ledger (paused memory), which extra event types the lifecycle paths
 * carry (ancillary usage) and what a membership change received late rechecks (Stripe invoices' seats) and dates (seat pushes). Each list is an ordinary provider, so the dependency shows in the module
 * graph; a context without this module (the CLI, a unit test) gets empty lists.
 */
@Global()
@Module({
  imports: [LedgerModule, PlansModule, SpendLimitsModule, AncillaryModule, StripeModule],
  providers: [
    {
      provide: WALLET_EXTENSIONS,
      useFactory: (limits: SpendLimitsService, quotas: QuotasService): WalletExtension[] => [
        limits.walletExtension,
        quotas.walletExtension,
      ],
      inject: [SpendLimitsService, QuotasService],
    },
    {
      provide: PLAN_SET_HOOKS,
      // The new account's wallet first (the ledger's), then its plan's allowance.
      useFactory: (ledger: LedgerService, plans: PlanAdminService): PlanSetHook[] => [
        (em, accountId) => ledger.ensureWallet(em, accountId),
        plans.planSetHook,
      ],
      inject: [LedgerService, PlanAdminService],
    },
    {
      provide: SETTLEMENT_HOOKS,
      useFactory: (usage: AncillaryUsageService): SettlementHook[] => [pausedMemoryHook(usage)],
      inject: [AncillaryUsageService],
    },
    {
      provide: EXTRA_EVENT_HANDLERS,
      useFactory: (usage: AncillaryUsageService, clock: Clock): ExtraEventHandler[] => [ancillaryEventHandler(usage, clock)],
      inject: [AncillaryUsageService, Clock],
    },
    {
      provide: SEAT_HISTORY_HOOKS,
      // Invoices created after a membership change received late: their seats rechecked (stripe_invoices is
      // Stripe's); what the change did to the seats over time, for seat pushes dated at their changes.
      useFactory: (invoices: InvoiceSeats): SeatHistoryHook[] => [invoices.seatHistoryHook, seatChangesHook],
      inject: [InvoiceSeats],
    },
  ],
  exports: [WALLET_EXTENSIONS, PLAN_SET_HOOKS, SETTLEMENT_HOOKS, EXTRA_EVENT_HANDLERS, SEAT_HISTORY_HOOKS],
})
export class ExtensionsModule {}
