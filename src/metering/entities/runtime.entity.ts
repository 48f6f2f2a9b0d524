import { Check, Column, CreateDateColumn, Entity, Index, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import { liveRuntimeSql } from 'src/plans/live-runtimes';

export const RUNTIME_STATUSES = ['reserved', 'running', 'paused', 'terminating', 'settled', 'voided'] as const;
export type RuntimeStatus = (typeof RUNTIME_STATUSES)[number];

/**
 * One runtime: its reservation (the hold taken up front, priced with a rate-card version) and its
 * metered session as the lifecycle events have shown it so far.
 */
@Entity({ name: 'runtimes' })
@Index('runtimes_account_idx', ['accountId', 'createdAt'])
@Index('runtimes_reservation_key', ['reservationId'], { unique: true })
@Index('runtimes_active_idx', ['status'], { where: `"status" IN ('reserved', 'running', 'paused', 'terminating')` })
// An account's runtimes that may still run, without its history: the concurrency quota counts them at each launch.
@Index('runtimes_live_account_idx', ['accountId', 'status'], { where: liveRuntimeSql() })
// An account's runtimes settled in a range (its usage, GET /v1/accounts/{id}/usage), without its history.
@Index('runtimes_account_settled_idx', ['accountId', 'settledAt'], { where: `"settled_at" IS NOT NULL` })
// The fleet's runtimes settled in a range (the usage trend by size class), without the fleet's history.
@Index('runtimes_settled_idx', ['settledAt'], { where: `"status" = 'settled'` })
@Check('runtimes_status_check', `"status" IN ('reserved', 'running', 'paused', 'terminating', 'settled', 'voided')`)
@Check('runtimes_minutes_check', `"reserved_minutes" >= 0`)
@Check('runtimes_amounts_check', `"charged" >= 0 AND "released" >= 0 AND "reserved_amount" >= 0 AND "charged" <= "reserved_amount"`)
export class Runtime {
  @PrimaryColumn({ name: 'runtime_id', type: 'text' })
  runtimeId: string;

  @Column({ name: 'account_id', type: 'text' })
  accountId: string;

  @Column({ name: 'reservation_id', type: 'text', nullable: true })
  reservationId: string | null;

  @Column({ name: 'user_id', type: 'text', nullable: true })
  userId: string | null;

  @Column({ name: 'agent_id', type: 'text', nullable: true })
  agentId: string | null;

  @Column({ type: 'text', nullable: true })
  variant: string | null;

  @Column({ type: 'jsonb', nullable: true })
  environment: Record<string, unknown> | null;

  @Column({ name: 'size_class', type: 'text', nullable: true })
  sizeClass: string | null;

  /** The Environment specification's spec digest of the environment the reservation priced (`sha256:…`). */
  @Column({ name: 'spec_digest', type: 'text', nullable: true })
  specDigest: string | null;

  @Column({ name: 'rate_per_hour', type: 'bigint', default: 0 })
  ratePerHour: string;

  @Column({ name: 'rate_card_version', type: 'text', nullable: true })
  rateCardVersion: string | null;

  @Column({ name: 'reserved_minutes', type: 'integer', default: 0 })
  reservedMinutes: number;

  @Column({ name: 'reserved_amount', type: 'bigint', default: 0 })
  reservedAmount: string;

  @Column({ name: 'hold_id', type: 'text', nullable: true })
  holdId: string | null;

  @Column({ name: 'request_fingerprint', type: 'text', nullable: true })
  requestFingerprint: string | null;

  @Column({ type: 'text', default: 'reserved' })
  status: RuntimeStatus;

  @Column({ name: 'start_deadline', type: 'timestamptz', nullable: true })
  startDeadline: Date | null;

  @Column({ name: 'started_at', type: 'timestamptz', nullable: true })
  startedAt: Date | null;

  /** Running time of the closed intervals. */
  @Column({ name: 'closed_ms', type: 'bigint', default: 0 })
  closedMs: string;

  /** Start of the open running interval, while running. */
  @Column({ name: 'open_since', type: 'timestamptz', nullable: true })
  openSince: Date | null;

  @Column({ name: 'last_seen_at', type: 'timestamptz', nullable: true })
  lastSeenAt: Date | null;

  @Column({ name: 'terminated_at', type: 'timestamptz', nullable: true })
  terminatedAt: Date | null;

  @Column({ name: 'termination_reason', type: 'text', nullable: true })
  terminationReason: string | null;

  @Column({ type: 'bigint', default: 0 })
  charged: string;

  @Column({ type: 'bigint', default: 0 })
  released: string;

  /** How the charge was decided: events, or a forced settlement that the events did not close. */
  @Column({ name: 'settlement', type: 'text', nullable: true })
  settlement: string | null;

  @Column({ name: 'settled_at', type: 'timestamptz', nullable: true })
  settledAt: Date | null;

  /** Events applied: the stored ones and the heartbeats counted below. */
  @Column({ name: 'events_count', type: 'integer', default: 0 })
  eventsCount: number;

  /**
   * Heartbeats are not stored: a heartbeat is new (counted) when its seq is above the highest
   * heartbeat seq the runtime has applied; its instant moves last_seen_at whatever its seq.
   */
  @Column({ name: 'heartbeat_seq', type: 'bigint', nullable: true })
  heartbeatSeq: string | null;

  @Column({ type: 'integer', default: 0 })
  heartbeats: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
