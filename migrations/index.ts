import { Foundation1796204055048 } from './1796204055048-Foundation';
import { Metering1796204484544 } from './1796204484544-Metering';
import { Ledger1796204668759 } from './1796204668759-Ledger';
import { LedgerTriggers1796204668760 } from './1796204668760-LedgerTriggers';
import { Plans1796205733689 } from './1796205733689-Plans';
import { SpendLimits1796206329676 } from './1796206329676-SpendLimits';
import { LedgerBalanceCheckByIndex1796206563447 } from './1796206563447-LedgerBalanceCheckByIndex';
import { Stripe1796206667218 } from './1796206667218-Stripe';
import { Reports1796207234078 } from './1796207234078-Reports';
import { ReportsRollups1796208457072 } from './1796208457072-ReportsRollups';
import { LedgerHoldsByKey1796210659424 } from './1796210659424-LedgerHoldsByKey';
import { LedgerStatementIndex1796211838776 } from './1796211838776-LedgerStatementIndex';
import { ReportsAccountRollups1796213965882 } from './1796213965882-ReportsAccountRollups';
import { DropPlanAllowances1796214833510 } from './1796214833510-DropPlanAllowances';
import { LedgerBalanceCheckSetBased1796214833511 } from './1796214833511-LedgerBalanceCheckSetBased';
import { LedgerBalanceCheckLookups1796220000000 } from './1796220000000-LedgerBalanceCheckLookups';
import { RuntimeEventsSessionIndex1796227202725 } from './1796227202725-RuntimeEventsSessionIndex';
import { UpdatedInPlaceFillfactor1796290000000 } from './1796290000000-UpdatedInPlaceFillfactor';
import { AuditHashInlined1796300000000 } from './1796300000000-AuditHashInlined';
import { LiveGrantsIndex1796300100000 } from './1796300100000-LiveGrantsIndex';
import { RuntimeSpecDigest1796394024202 } from './1796394024202-RuntimeSpecDigest';
import { AuthFailures1796394272194 } from './1796394272194-AuthFailures';
import { AdminConsoleRecords1796393052532 } from './1796393052532-AdminConsoleRecords';
import { JobRunsAndOpenHolds1796393298321 } from './1796393298321-JobRunsAndOpenHolds';
import { HeartbeatsBySeq1796400000000 } from './1796400000000-HeartbeatsBySeq';
import { Ancillary1796404213145 } from './1796404213145-Ancillary';
import { AncillaryCommands1796405410116 } from './1796405410116-AncillaryCommands';
import { PlansFromCatalog1796410000000 } from './1796410000000-PlansFromCatalog';
import { RuntimeEventsByRuntimeMonth1796469101118 } from './1796469101118-RuntimeEventsByRuntimeMonth';
import { AccountsBillingCycleIndex1796504505832 } from './1796504505832-AccountsBillingCycleIndex';
import { ConsoleSignOut1796540000000 } from './1796540000000-ConsoleSignOut';
import { SubscriptionItemsOrder1796541000000 } from './1796541000000-SubscriptionItemsOrder';
import { SubscriptionEndAndInvoicePaidAt1796542000000 } from './1796542000000-SubscriptionEndAndInvoicePaidAt';
import { SuspensionCauses1796543000000 } from './1796543000000-SuspensionCauses';
import { InvoiceSeatsRecheck1796544000000 } from './1796544000000-InvoiceSeatsRecheck';
import { LiveRuntimesByAccount1796558685545 } from './1796558685545-LiveRuntimesByAccount';
import { AccountHistoryReads1796559380333 } from './1796559380333-AccountHistoryReads';
import { LedgerMonths1796570226303 } from './1796570226303-LedgerMonths';
import { ReportPeriodReads1796571117268 } from './1796571117268-ReportPeriodReads';
import { PlanChangesIndex1796560249126 } from './1796560249126-PlanChangesIndex';
import { NonPaymentWaiver1796571303555 } from './1796571303555-NonPaymentWaiver';
import { SeatPushDates1796582163186 } from './1796582163186-SeatPushDates';
import { ApiKeyAccounts1796582197064 } from './1796582197064-ApiKeyAccounts';
import { UsageTrendReads1796582197065 } from './1796582197065-UsageTrendReads';
import { LowBalanceCrossings1796593315979 } from './1796593315979-LowBalanceCrossings';
import { AuditTimeRange1796593348210 } from './1796593348210-AuditTimeRange';
import { AccountSeats1796593662481 } from './1796593662481-AccountSeats';
import { StripeInvoiceAmounts1796414845223 } from './1796414845223-StripeInvoiceAmounts';

/** Every migration, in order. `npm run migration:generate -- <Name>` writes a file here; add it to this list. */
export const MIGRATIONS: (new () => object)[] = [
  Foundation1796204055048,
  Metering1796204484544,
  Ledger1796204668759,
  LedgerTriggers1796204668760,
  Plans1796205733689,
  SpendLimits1796206329676,
  LedgerBalanceCheckByIndex1796206563447,
  Stripe1796206667218,
  Reports1796207234078,
  ReportsRollups1796208457072,
  LedgerHoldsByKey1796210659424,
  LedgerStatementIndex1796211838776,
  ReportsAccountRollups1796213965882,
  DropPlanAllowances1796214833510,
  LedgerBalanceCheckSetBased1796214833511,
  LedgerBalanceCheckLookups1796220000000,
  RuntimeEventsSessionIndex1796227202725,
  UpdatedInPlaceFillfactor1796290000000,
  AuditHashInlined1796300000000,
  LiveGrantsIndex1796300100000,
  RuntimeSpecDigest1796394024202,
  AuthFailures1796394272194,
  AdminConsoleRecords1796393052532,
  JobRunsAndOpenHolds1796393298321,
  HeartbeatsBySeq1796400000000,
  Ancillary1796404213145,
  AncillaryCommands1796405410116,
  PlansFromCatalog1796410000000,
  StripeInvoiceAmounts1796414845223,
  RuntimeEventsByRuntimeMonth1796469101118,
  AccountsBillingCycleIndex1796504505832,
  ConsoleSignOut1796540000000,
  SubscriptionItemsOrder1796541000000,
  SubscriptionEndAndInvoicePaidAt1796542000000,
  SuspensionCauses1796543000000,
  InvoiceSeatsRecheck1796544000000,
  LiveRuntimesByAccount1796558685545,
  AccountHistoryReads1796559380333,
  PlanChangesIndex1796560249126,
  LedgerMonths1796570226303,
  ReportPeriodReads1796571117268,
  NonPaymentWaiver1796571303555,
  SeatPushDates1796582163186,
  ApiKeyAccounts1796582197064,
  UsageTrendReads1796582197065,
  LowBalanceCrossings1796593315979,
  AuditTimeRange1796593348210,
  AccountSeats1796593662481,
];
