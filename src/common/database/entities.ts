import { Account } from '../../accounts/entities/account.entity';
import { AncillaryCharge } from '../../ancillary/entities/ancillary-charge.entity';
import { AncillaryCommand } from '../../ancillary/entities/ancillary-command.entity';
import { AncillaryEvent } from '../../ancillary/entities/ancillary-event.entity';
import { AncillaryItem } from '../../ancillary/entities/ancillary-item.entity';
import { AuditChain } from '../../audit/entities/audit-chain.entity';
import { AuditLog } from '../../audit/entities/audit-log.entity';
import { ApiKey } from '../../accounts/entities/api-key.entity';
import { AuthFailure } from '../../accounts/entities/auth-failure.entity';
import { Grant } from '../../ledger/entities/grant.entity';
import { HoldAllocation } from '../../ledger/entities/hold-allocation.entity';
import { Hold } from '../../ledger/entities/hold.entity';
import { LedgerEntry } from '../../ledger/entities/ledger-entry.entity';
import { LedgerTransaction } from '../../ledger/entities/ledger-transaction.entity';
import { Wallet } from '../../ledger/entities/wallet.entity';
import { InboxMessage } from '../../messaging/entities/inbox-message.entity';
import { OutboxMessage } from '../../messaging/entities/outbox-message.entity';
import { RuntimeEvent } from '../../metering/entities/runtime-event.entity';
import { ReservationExtension } from '../../metering/entities/reservation-extension.entity';
import { RuntimeCommand } from '../../messaging/entities/runtime-command.entity';
import { Runtime } from '../../metering/entities/runtime.entity';
import { NotificationSent } from '../../messaging/entities/notification-sent.entity';
import { SpendLimitAlert } from '../../spend-limits/entities/spend-limit-alert.entity';
import { SpendLimit } from '../../spend-limits/entities/spend-limit.entity';
import { AccountMemberEvent } from '../../members/entities/account-member-event.entity';
import { AccountMember } from '../../members/entities/account-member.entity';
import { SeatDiscrepancy } from '../../stripe/entities/seat-discrepancy.entity';
import { StripeInvoice } from '../../stripe/entities/stripe-invoice.entity';
import { StripeSubscription } from '../../stripe/entities/stripe-subscription.entity';
import { StripeTopUp } from '../../stripe/entities/stripe-top-up.entity';
import { StripeWebhookEvent } from '../../stripe/entities/stripe-webhook-event.entity';
import { JobRun } from '../../jobs/entities/job-run.entity';
import {
  UsageAccountDailyRollup,
  UsageAccountHourlyRollup,
  UsageAccountMonthlyRollup,
  UsageDailyRollup,
  UsageMonthlyRollup,
  UsageRollup,
} from '../../reports/entities/usage-rollup.entity';

/** Every entity of the service: the one list the data source and the migration check use. */
export const ENTITIES = [Account, ApiKey, OutboxMessage, InboxMessage, RuntimeEvent, Runtime, RuntimeCommand, ReservationExtension,
  Wallet, Grant, Hold, HoldAllocation, LedgerTransaction, LedgerEntry, AuditLog, AuditChain,
  NotificationSent, SpendLimit, SpendLimitAlert,
  AccountMember, AccountMemberEvent, StripeSubscription, StripeTopUp, StripeInvoice, SeatDiscrepancy,
  UsageRollup, UsageDailyRollup, UsageMonthlyRollup, UsageAccountHourlyRollup, UsageAccountDailyRollup, UsageAccountMonthlyRollup,
  AuthFailure, JobRun, StripeWebhookEvent, AncillaryEvent, AncillaryItem, AncillaryCharge, AncillaryCommand];
