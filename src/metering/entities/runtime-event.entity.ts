import { Check, Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * Every lifecycle event ever accepted, keyed by its id: the inbox of the lifecycle stream
 * (a second delivery of an id has no effect) and the set of events a runtime's charge is built from.
 * Sessions are built from the events other than heartbeats, so only those are indexed by runtime:
 * heartbeats, most of the stream, cost one index entry (the id) instead of two.
 */
@Entity({ name: 'runtime_events' })
@Index('runtime_events_session_idx', ['runtimeId', 'occurredAt', 'seq'], { where: `"type" <> 'runtime.heartbeat'` })
@Check('runtime_events_seq_check', `"seq" >= 0`)
export class RuntimeEvent {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ type: 'text' })
  type: string;

  @Column({ name: 'account_id', type: 'text' })
  accountId: string;

  @Column({ name: 'runtime_id', type: 'text' })
  runtimeId: string;

  @Column({ name: 'occurred_at', type: 'timestamptz' })
  occurredAt: Date;

  @Column({ type: 'bigint' })
  seq: string;

  /** The month of the runtime's row (`runtime_month(runtimes.created_at)`): the partition its events live in. */
  @PrimaryColumn({ name: 'runtime_month', type: 'date' })
  runtimeMonth: string;

  @Column({ type: 'jsonb', default: () => `'{}'` })
  data: Record<string, unknown>;

  @CreateDateColumn({ name: 'received_at', type: 'timestamptz' })
  receivedAt: Date;
}
