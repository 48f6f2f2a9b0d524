import type { Call, PreparedStatement } from '../common/database/pipelined-transaction';
import { formatCredits } from '../common/money';
import type { CreateHoldInput } from '../ledger/ledger.types';
import type { RuntimeRow } from '../metering/runtime-row';
import type { Environment } from '../pricing/environment';
import type { Price } from '../pricing/pricing';
import { environmentDigest, withoutDigest } from '../pricing/spec-digest';
import type { ReservationRequest } from './dto/reservation.dto';

/** A reservation's rows: its runtime row (written with its hold) and its hold. */

const RESERVE_RUNTIMES: PreparedStatement = {
  name: 'reserve_runtimes_v2',
  text: `WITH reserved AS (INSERT INTO runtimes (runtime_id, account_id, reservation_id, user_id, agent_id, variant, environment, size_class,
      spec_digest, rate_per_hour, rate_card_version, reserved_minutes, reserved_amount, hold_id, request_fingerprint, status,
      start_deadline, created_at)
    SELECT q.runtime_id, q.account_id, q.reservation_id, q.user_id, q.agent_id, q.variant, q.environment, q.size_class,
      q.spec_digest, q.rate_per_hour, q.rate_card_version, q.reserved_minutes, q.reserved_amount, q.hold_id, q.request_fingerprint, 'reserved',
      q.start_deadline, q.created_at
    FROM jsonb_to_recordset($1::jsonb) AS q(runtime_id text, account_id text, reservation_id text, user_id text, agent_id text,
      variant text, environment jsonb, size_class text, spec_digest text, rate_per_hour bigint, rate_card_version text, reserved_minutes int,
      reserved_amount bigint, hold_id text, request_fingerprint text, start_deadline timestamptz, created_at timestamptz)
    ON CONFLICT (runtime_id) DO UPDATE SET
      reservation_id = EXCLUDED.reservation_id, user_id = EXCLUDED.user_id, agent_id = EXCLUDED.agent_id,
      variant = EXCLUDED.variant, environment = EXCLUDED.environment, size_class = EXCLUDED.size_class, spec_digest = EXCLUDED.spec_digest,
      rate_per_hour = EXCLUDED.rate_per_hour, rate_card_version = EXCLUDED.rate_card_version,
      reserved_minutes = EXCLUDED.reserved_minutes, reserved_amount = EXCLUDED.reserved_amount,
      hold_id = EXCLUDED.hold_id, request_fingerprint = EXCLUDED.request_fingerprint, start_deadline = EXCLUDED.start_deadline
    WHERE runtimes.reservation_id IS NULL AND runtimes.account_id = EXCLUDED.account_id
    RETURNING *)
    SELECT r.* FROM (SELECT ledger_assert((SELECT count(*) FROM reserved) = jsonb_array_length($1::jsonb),
        'reservations refused: a runtime of the batch was reserved meanwhile')) AS checked(ok)
      JOIN reserved r ON checked.ok`,
};

/** A reservation's runtime row, as RESERVE_RUNTIMES inserts it (attached to the row of a runtime whose events came first). */
export type RuntimeInsert = Record<string, unknown> & { runtime_id: string };

/** Every runtime row of a batch in one statement; a runtime reserved meanwhile fails it (and so the batch). */
export function reserveRuntimesCall(inserts: readonly RuntimeInsert[]): Call {
  return { statement: RESERVE_RUNTIMES, values: [JSON.stringify(inserts)] };
}

/** A runtime's reservation is given this long to start before its hold is voided. */
export const START_WINDOW_MS = 15 * 60_000;

/** The hold of a reservation (the time reservation, deducted up front). */
export function reservationHold(request: ReservationRequest, price: Price, amount: bigint, actor: string, correlationId?: string | null): CreateHoldInput {
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
export function runtimeInsert(request: ReservationRequest, price: Price, amount: bigint, requestFingerprint: string, now: Date): RuntimeInsert {
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

const EXTEND_RUNTIME: PreparedStatement = {
  name: 'reservation_extend_v1',
  text: `WITH recorded AS (INSERT INTO reservation_extensions (idempotency_key, runtime_id, minutes, amount, fingerprint) VALUES ($1, $2, $3, $4, $5))
    UPDATE runtimes SET reserved_minutes = reserved_minutes + $3, reserved_amount = reserved_amount + $4::bigint, updated_at = now()
    WHERE runtime_id = $2 RETURNING *`,
};

/** An extension's record and its runtime row grown by its minutes and amount (returns the row). */
export function extendRuntimeCall(e: { key: string; runtimeId: string; minutes: number; amount: bigint; fingerprint: string }): Call {
  return { statement: EXTEND_RUNTIME, values: [e.key, e.runtimeId, e.minutes, e.amount.toString(), e.fingerprint] };
}
