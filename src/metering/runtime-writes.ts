import type { Call, PreparedStatement } from 'src/common/database/pipelined-transaction';

/**
 * The writes of `runtimes` and `reservation_extensions` that admission asks for (metering owns both
 * tables): a batch's reserved runtime rows, and an extension's record with its runtime row grown.
 */

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
