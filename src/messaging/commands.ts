import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { z } from 'zod';
import type { AuditService } from 'src/audit/audit.service';
import { instant } from 'src/common/http/api-schemas';
import type { Call, PreparedStatement } from 'src/common/database/pipelined-transaction';
import { rows } from 'src/common/database/transaction';
import { enqueue } from './outbox';

export const TERMINATE_REASONS = ['reservation_expired', 'spend_limit', 'account_suspended', 'admin', 'unreserved', 'unreachable'] as const;
export type TerminateReason = (typeof TERMINATE_REASONS)[number];

/** A command on `billing.commands.v1` (keyed by accountId); the AsyncAPI document is made from this schema. */
export const terminateCommandSchema = z
  .strictObject({
    id: z.string().meta({ description: 'The command id (`cmd_<uuid>`); a re-issued command has a new id' }),
    type: z.literal('runtime.terminate'),
    accountId: z.string(),
    runtimeId: z.string(),
    reason: z.enum(TERMINATE_REASONS),
    issuedAt: instant,
  })
  .meta({
    id: 'TerminateCommand',
    description:
      'Tells the control plane to terminate a runtime. Re-issued while the runtime keeps reporting past the grace period; acknowledged by its `runtime.terminated`.',
  });
export type TerminateCommand = z.input<typeof terminateCommandSchema>;

export interface TerminateTarget {
  runtimeId: string;
  accountId: string;
  reason: TerminateReason;
}

/** Where a command goes and who issues it (`system:<job>`, or the key of an admin's request). */
export interface CommandIssuer {
  topic: string;
  actor: string;
  audit: AuditService;
}

/**
 * Writes `runtime.terminate` commands: a row each (so GET /v1/reservations shows them), an outbox
 * message each for `billing.commands.v1`, and an audit row each (an enforcement), in the caller's
 * transaction.
 */
export async function issueTerminate(em: EntityManager, issuer: CommandIssuer, targets: TerminateTarget[], now: Date): Promise<void> {
  if (targets.length === 0) return;
  const { topic } = issuer;
  const commands = targets.map((t) => ({ id: `cmd_${randomUUID()}`, ...t }));
  await em.query(
    `INSERT INTO runtime_commands (id, runtime_id, account_id, type, reason, issued_at)
     SELECT id, runtime_id, account_id, 'runtime.terminate', reason, $5 FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS c(id, runtime_id, account_id, reason)`,
    [
      commands.map((c) => c.id),
      commands.map((c) => c.runtimeId),
      commands.map((c) => c.accountId),
      commands.map((c) => c.reason),
      now.toISOString(),
    ],
  );
  await enqueue(
    em,
    commands.map((c) => ({
      topic,
      key: c.accountId,
      payload: {
        id: c.id,
        type: 'runtime.terminate',
        accountId: c.accountId,
        runtimeId: c.runtimeId,
        reason: c.reason,
        issuedAt: now.toISOString(),
      } satisfies TerminateCommand,
    })),
  );
  await auditCommands(em, issuer, 'runtime.terminate_issued', commands, now);
}

/** An audit row per command (an enforcement, or its withdrawal): who, the runtime, the reason. */
function auditCommands(
  em: EntityManager,
  issuer: CommandIssuer,
  action: 'runtime.terminate_issued' | 'runtime.terminate_withdrawn',
  commands: { id: string; runtimeId: string; accountId: string; reason: string }[],
  now: Date,
): Promise<unknown> {
  return issuer.audit.recordMany(
    em,
    commands.map((c) => ({
      actor: issuer.actor,
      action,
      accountId: c.accountId,
      after: { command: c.id, runtimeId: c.runtimeId, reason: c.reason },
      at: now,
    })),
  );
}

/**
 * Commands of one reason made moot: a runtime told to terminate because it ran without a reservation
 * (`unreserved`) and reserved since, or one told its reservation ran out (`reservation_expired`) whose
 * reservation an extension made longer than its running time. The commands are closed
 * (`acknowledgedAt` set, so they are neither re-issued nor force-settled on) and audited as
 * `runtime.terminate_withdrawn`; a command of another reason stays open. Returns how many were open.
 */
export async function withdrawCommands(
  em: EntityManager,
  issuer: CommandIssuer,
  runtimeId: string,
  reason: Extract<TerminateReason, 'unreserved' | 'reservation_expired'>,
  now: Date,
): Promise<number> {
  const closed = await rows<{ id: string; account_id: string }>(
    em,
    `UPDATE runtime_commands SET acknowledged_at = $2 WHERE runtime_id = $1 AND reason = $3 AND acknowledged_at IS NULL
     RETURNING id, account_id`,
    [runtimeId, now.toISOString(), reason],
  );
  const withdrawn = closed.map((c) => ({ id: c.id, runtimeId, accountId: c.account_id, reason }));
  await auditCommands(em, issuer, 'runtime.terminate_withdrawn', withdrawn, now);
  return withdrawn.length;
}

/** `unreserved` commands of a runtime reserved since (withdrawCommands). */
export function withdrawUnreserved(em: EntityManager, issuer: CommandIssuer, runtimeId: string, now: Date): Promise<number> {
  return withdrawCommands(em, issuer, runtimeId, 'unreserved', now);
}

/** A runtime's `runtime.terminated` acknowledges every command still open for it. */
export async function acknowledgeCommands(em: EntityManager, runtimeIds: string[], now: Date): Promise<void> {
  if (runtimeIds.length === 0) return;
  const call = acknowledgeCommandsCall(runtimeIds, now);
  await em.query(call.statement.text, call.values);
}

const ACKNOWLEDGE_STATEMENT: PreparedStatement = {
  name: 'commands_acknowledge_v1',
  text: `UPDATE runtime_commands SET acknowledged_at = $2 WHERE runtime_id = ANY($1::text[]) AND acknowledged_at IS NULL`,
};

/** acknowledgeCommands' statement, for a caller that sends it with others in one round trip. */
export function acknowledgeCommandsCall(runtimeIds: string[], now: Date): Call {
  return { statement: ACKNOWLEDGE_STATEMENT, values: [runtimeIds, now.toISOString()] };
}

const OPEN_COMMANDS_STATEMENT: PreparedStatement = {
  name: 'commands_open_v1',
  text: `SELECT DISTINCT runtime_id FROM runtime_commands WHERE runtime_id = ANY($1::text[]) AND acknowledged_at IS NULL`,
};

/** Which of these runtimes have a terminate command not yet acknowledged: rows of `runtime_id`. */
export function openCommandsCall(runtimeIds: string[]): Call {
  return { statement: OPEN_COMMANDS_STATEMENT, values: [runtimeIds] };
}
