import { formatCredits } from 'src/common/money';
import type { CreateHoldInput } from 'src/ledger/ledger.types';
import type { RuntimeInsert } from 'src/metering/runtime-writes';
import type { RuntimeRow } from 'src/metering/runtime-row';
import type { Environment } from 'src/pricing/environment';
import type { Price } from 'src/pricing/pricing';
import { environmentDigest, withoutDigest } from 'src/pricing/spec-digest';
import type { ReservationRequest } from './dto/reservation.dto';

/** A reservation's rows: its runtime row (written with its hold, by metering's runtime-writes.ts) and its hold. */

/** A runtime's reservation is given this long to start before its hold is voided. */
export const START_WINDOW_MS = 15 * 60_000;

/** The hold of a reservation (the time reservation, deducted up front). */
export function reservationHold(
  request: ReservationRequest,
  price: Price,
  amount: bigint,
  actor: string,
  correlationId?: string | null,
): CreateHoldInput {
  const { holdId, idempotencyKey } = holdKeys(request.runtimeId);
  const environment = request.environment as Environment;
  return {
    accountId: request.accountId,
    holdId,
    amount,
    // Metering's sweeper voids a hold whose runtime never started; the hold itself does not expire.
    expiresAt: null,
    reference: request.runtimeId,
    idempotencyKey,
    actor,
    correlationId,
    reason: `reservation of runtime ${request.runtimeId}: ${request.minutes} minutes of ${request.variant} ${environment.sizeClass} at ${formatCredits(price.ratePerHourMicros)}/h (rate card ${price.rateCardVersion})`,
  };
}

/** The runtime row of a reservation: the rate and rate-card version it was priced with, the spec digest of its environment, its hold, its start deadline. */
export function runtimeInsert(
  request: ReservationRequest,
  price: Price,
  amount: bigint,
  requestFingerprint: string,
  now: Date,
): RuntimeInsert {
  const environment = request.environment as Environment;
  return {
    runtime_id: request.runtimeId,
    account_id: request.accountId,
    reservation_id: `res_${request.runtimeId}`,
    user_id: request.userId ?? null,
    agent_id: request.agentId ?? null,
    variant: request.variant,
    environment: withoutDigest(environment),
    size_class: environment.sizeClass,
    spec_digest: environmentDigest(environment),
    rate_per_hour: price.ratePerHourMicros.toString(),
    rate_card_version: price.rateCardVersion,
    reserved_minutes: request.minutes,
    reserved_amount: amount.toString(),
    hold_id: holdKeys(request.runtimeId).holdId,
    request_fingerprint: requestFingerprint,
    start_deadline: new Date(now.getTime() + START_WINDOW_MS).toISOString(),
    created_at: now.toISOString(),
  };
}

/** A reservation's hold and the hold's idempotency key. */
export function holdKeys(runtimeId: string): { holdId: string; idempotencyKey: string } {
  return { holdId: `hold_${runtimeId}`, idempotencyKey: `reservation:${runtimeId}` };
}

/** The reservation's runtime row as RESERVE_RUNTIMES returned it, by runtime id. */
export function reservedRows(found: unknown[]): Map<string, RuntimeRow> {
  return new Map((found as RuntimeRow[]).map((r) => [r.runtime_id, r]));
}

/** A runtime's row once it is reserved (none before). */
export const RESERVED_RUNTIME = `SELECT * FROM runtimes WHERE runtime_id = $1 AND reservation_id IS NOT NULL`;

/** An extension's idempotency record (its key and request fingerprint). */
export const PRIOR_EXTENSION = `SELECT fingerprint FROM reservation_extensions WHERE idempotency_key = $1`;
