import type { AuditService } from 'src/audit/audit.service';
import { rows } from 'src/common/database/transaction';
import { formatCredits } from 'src/common/money';
import { notifyOnce, type Notification } from 'src/messaging/notifications';
import type { Clock } from 'src/infra/clock/clock';
import { clawBack } from './clawback';
import type { Effect } from './stripe-events.service';
import type { StripeEventLike } from './stripe-gateway';
import { readCharge } from './stripe-objects';

/**
 * A reversal whose top-up is not recorded yet (it came before its `checkout.session.completed`):
 * acknowledged but kept out of the inbox, so that it applies when its top-up is recorded (the
 * checkout replays it from Stripe's event list; the recovery job tries it again meanwhile).
 */
export class TopUpNotRecordedYet extends Error {}

/**
 * A refund or a dispute of a charge that paid a top-up: the share of the top-up's credits it
 * reversed is clawed back (once per event, up to what is left of the grant).
 */
export async function chargeReversed(
  deps: { audit: AuditService; clock: Clock; actor: string; notificationsTopic: string },
  event: StripeEventLike,
  object: unknown,
): Promise<Effect | null> {
  const charge = readCharge(object, event.type === 'charge.refunded' ? 'refund' : 'dispute');
  if (!charge?.paymentIntentId) return null;
  return async (em) => {
    const [topUp] = await rows<{ session_id: string; account_id: string; credits: string; clawed_back: string; grant_id: string }>(
      em,
      `SELECT session_id, account_id, credits::text, clawed_back::text, grant_id FROM stripe_top_ups WHERE payment_intent_id = $1 FOR UPDATE`,
      [charge.paymentIntentId],
    );
    if (!topUp) throw new TopUpNotRecordedYet(`no top-up paid by ${charge.paymentIntentId} is recorded yet`);
    const credits = BigInt(topUp.credits);
    // The share of the top-up reversed (all of it for a dispute or a full refund).
    const reversed =
      charge.amount > 0 && charge.reversed < charge.amount ? (credits * BigInt(charge.reversed)) / BigInt(charge.amount) : credits;
    const wanted = reversed - BigInt(topUp.clawed_back);
    if (wanted <= 0n) return {};
    const taken = await clawBack(em, deps.audit, {
      accountId: topUp.account_id,
      grantId: topUp.grant_id,
      max: wanted,
      idempotencyKey: `stripe-claw-back:${event.id}`,
      cause: {
        kind: event.type === 'charge.refunded' ? 'refund' : 'dispute',
        chargeId: charge.chargeId,
        disputeId: event.type === 'charge.refunded' ? null : charge.id,
        topUpSession: topUp.session_id,
        reversed: wanted,
      },
      reason: `${event.type} ${charge.id}: ${formatCredits(wanted)} credits of top-up ${topUp.session_id} reversed`,
      reference: charge.id,
      actor: deps.actor,
      now: deps.clock.now(),
    });
    if (taken > 0n) {
      await em.query(`UPDATE stripe_top_ups SET clawed_back = clawed_back + $2 WHERE session_id = $1`, [
        topUp.session_id,
        taken.toString(),
      ]);
      // The holder hears of credits taken back, once per Stripe event.
      const notice: Notification = {
        type: 'credits.clawed_back',
        accountId: topUp.account_id,
        cause: `credits.clawed_back:${event.id}`,
        data: {
          grantId: topUp.grant_id,
          credits: formatCredits(taken),
          reason: event.type === 'charge.refunded' ? 'refund' : 'dispute',
          chargeId: charge.chargeId,
          topUpSession: topUp.session_id,
        },
      };
      await notifyOnce(em, deps.notificationsTopic, [notice], deps.clock.now());
    }
    return {};
  };
}

/** A refund or a dispute of the charge of a payment intent. */
export const isReversalOf = (event: StripeEventLike, paymentIntentId: string): boolean =>
  (event.type === 'charge.refunded' || event.type === 'charge.dispute.created') &&
  readCharge(event.data.object, event.type === 'charge.refunded' ? 'refund' : 'dispute')?.paymentIntentId === paymentIntentId;
