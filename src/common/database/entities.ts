import { Account } from 'src/accounts/entities/account.entity';
import { AncillaryCharge } from 'src/ancillary/entities/ancillary-charge.entity';
import { AncillaryCommand } from 'src/ancillary/entities/ancillary-command.entity';
import { AncillaryEvent } from 'src/ancillary/entities/ancillary-event.entity';
import { AncillaryItem } from 'src/ancillary/entities/ancillary-item.entity';
import { AuditChain } from 'src/audit/entities/audit-chain.entity';
import { AuditLog } from 'src/audit/entities/audit-log.entity';
import { ApiKey } from 'src/accounts/entities/api-key.entity';
import { ApiKeyAccount } from 'src/accounts/entities/api-key-account.entity';
import { AuthFailure } from 'src/accounts/entities/auth-failure.entity';
import { Grant } from 'src/ledger/entities/grant.entity';
import { HoldAllocation } from 'src/ledger/entities/hold-allocation.entity';
import { Hold } from 'src/ledger/entities/hold.entity';
import { LedgerEntry } from 'src/ledger/entities/ledger-entry.entity';
import { LedgerMonth } from 'src/ledger/entities/ledger-month.entity';
import { LedgerTransaction } from 'src/ledger/entities/ledger-transaction.entity';
import { Wallet } from 'src/ledger/entities/wallet.entity';
import { InboxMessage } from 'src/messaging/entities/inbox-message.entity';
import { OutboxMessage } from 'src/messaging/entities/outbox-message.entity';
import { EventMonthArchive } from 'src/metering/entities/event-month-archive.entity';
import { RuntimeEvent } from 'src/metering/entities/runtime-event.entity';
import { ReservationExtension } from 'src/metering/entities/reservation-extension.entity';
import { RuntimeCommand } from 'src/messaging/entities/runtime-command.entity';
import { Runtime } from 'src/metering/entities/runtime.entity';
import { NotificationSent } from 'src/messaging/entities/notification-sent.entity';
import { SpendLimitAlert } from 'src/spend-limits/entities/spend-limit-alert.entity';
import { SpendLimit } from 'src/spend-limits/entities/spend-limit.entity';
import { AccountMemberEvent } from 'src/members/entities/account-member-event.entity';
import { AccountMember } from 'src/members/entities/account-member.entity';
import { AccountSeats } from 'src/members/entities/account-seats.entity';
import { SeatChange } from 'src/stripe/entities/seat-change.entity';
import { SeatDiscrepancy } from 'src/stripe/entities/seat-discrepancy.entity';
import { SeatPush } from 'src/stripe/entities/seat-push.entity';
import { StripeInvoice } from 'src/stripe/entities/stripe-invoice.entity';
import { StripeSubscription } from 'src/stripe/entities/stripe-subscription.entity';
import { StripeTopUp } from 'src/stripe/entities/stripe-top-up.entity';
import { StripeWebhookEvent } from 'src/stripe/entities/stripe-webhook-event.entity';
import { JobRun } from 'src/jobs/entities/job-run.entity';
import {
  UsageAccountDailyRollup,
  UsageAccountHourlyRollup,
  UsageAccountMonthlyRollup,
  UsageDailyRollup,
  UsageMonthlyRollup,
  UsageRollup,
} from 'src/reports/entities/usage-rollup.entity';

/** Every entity of the service: the one list the data source and the migration check use. */
export const ENTITIES = [
  Account,
  ApiKey,
  ApiKeyAccount,
  OutboxMessage,
  InboxMessage,
  RuntimeEvent,
  EventMonthArchive,
  Runtime,
  RuntimeCommand,
  ReservationExtension,
  Wallet,
  Grant,
  Hold,
  HoldAllocation,
  LedgerTransaction,
  LedgerEntry,
  LedgerMonth,
  AuditLog,
  AuditChain,
  NotificationSent,
  SpendLimit,
  SpendLimitAlert,
  AccountMember,
  AccountMemberEvent,
  AccountSeats,
  StripeSubscription,
  StripeTopUp,
  StripeInvoice,
  SeatDiscrepancy,
  SeatChange,
  SeatPush,
  UsageRollup,
  UsageDailyRollup,
  UsageMonthlyRollup,
  UsageAccountHourlyRollup,
  UsageAccountDailyRollup,
  UsageAccountMonthlyRollup,
  AuthFailure,
  JobRun,
  StripeWebhookEvent,
  AncillaryEvent,
  AncillaryItem,
  AncillaryCharge,
  AncillaryCommand,
];
