// Owns: stripe_subscriptions, stripe_invoices, stripe_top_ups, stripe_webhook_events, stripe_seat_discrepancies, stripe_seat_changes, stripe_seat_pushes.
import { Module } from '@nestjs/common';
import { AccountsModule } from 'src/accounts/accounts.module';
import { LedgerModule } from 'src/ledger/ledger.module';
import { MembersModule } from 'src/members/members.module';
import { PlanCatalogModule } from 'src/plan-catalog/plan-catalog.module';
import { SpendLimitsModule } from 'src/spend-limits/spend-limits.module';
import { SuspensionService } from 'src/spend-limits/suspension.service';
import { CycleAllowances } from './cycle-allowances';
import { InvoiceSeats } from './invoice-records';
import { SeatPushes } from './seat-pushes';
import { SeatsService } from './seats.service';
import { StripeController } from './stripe.controller';
import { NonPayment } from './non-payment';
import { StripeEventsService } from './stripe-events.service';
import { StripeGateway } from './stripe-gateway';
import { StripeJobs } from './stripe-jobs';
import { SubscriptionsService } from './subscriptions.service';
import { TopUpsService } from './top-ups.service';

/** Stripe: Team subscriptions and their seats, top-ups through Checkout, webhooks, reconciliation and recovery. */
@Module({
  imports: [AccountsModule, LedgerModule, PlanCatalogModule, MembersModule, SpendLimitsModule],
  controllers: [StripeController],
  // SuspensionService is not exported by its module; it is stateless, so an instance here is the same service.
  providers: [
    StripeGateway,
    SubscriptionsService,
    SeatsService,
    CycleAllowances,
    StripeEventsService,
    NonPayment,
    TopUpsService,
    StripeJobs,
    SuspensionService,
    InvoiceSeats,
    SeatPushes,
  ],
  exports: [StripeGateway, SeatsService, StripeEventsService, SubscriptionsService, InvoiceSeats, SeatPushes],
})
export class StripeModule {}
