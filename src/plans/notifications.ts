import type { Notification as AnyNotification } from '../messaging/notifications';

export { notificationId, notifyOnce } from '../messaging/notifications';

/** What the plans module tells users about on `billing.notifications.v1`. */
export type PlanNotificationType = 'credits.granted' | 'credits.expired' | 'quota.exhausted' | 'wallet.low_balance';

export type Notification = AnyNotification<PlanNotificationType>;
