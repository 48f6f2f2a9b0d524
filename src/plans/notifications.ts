import { MICROS_PER_CREDIT } from 'src/common/money';
import type { Notification as AnyNotification } from 'src/messaging/notifications';
import type { Plan } from 'src/plan-catalog/plan-catalog';

export { notificationId, notifyOnce } from 'src/messaging/notifications';

/** What the plans module tells users about on `billing.notifications.v1`. */
export type PlanNotificationType = 'credits.granted' | 'credits.expired' | 'quota.exhausted' | 'wallet.low_balance';

export type Notification = AnyNotification<PlanNotificationType>;

/**
 * `wallet.low_balance` fires when a reservation leaves the available balance below this: a tenth
 * of the period's included credits, and never less than 1 credit (plans without an allowance).
 */
export function lowBalanceThreshold(plan: Plan): bigint {
  const tenth = plan.includedCreditsMicros / 10n;
  return tenth > MICROS_PER_CREDIT ? tenth : MICROS_PER_CREDIT;
}
