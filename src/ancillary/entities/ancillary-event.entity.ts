import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * Ancillary usage events (snapshots, volumes, egress) by id: the inbox (a known id is skipped) and
 * the set each item's usage is computed from. Owned by the ancillary module.
 */
@Entity({ name: 'ancillary_events' })
@Index('ancillary_events_item_idx', ['itemKey', 'occurredAt'])
export class AncillaryEvent {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ type: 'text' })
  type: string;

  @Column({ name: 'account_id', type: 'text' })
  accountId: string;

  /** `snapshot:<snapshotId>`, `volume:<volumeId>` or `egress:<event id>`. */
  @Column({ name: 'item_key', type: 'text' })
  itemKey: string;

  @Column({ name: 'runtime_id', type: 'text', nullable: true })
  runtimeId: string | null;

  @Column({ name: 'occurred_at', type: 'timestamptz' })
  occurredAt: Date;

  @Column({ type: 'bigint', default: 0 })
  seq: string;

  @Column({ type: 'jsonb' })
  data: Record<string, unknown>;

  @Column({ name: 'received_at', type: 'timestamptz', default: () => 'now()' })
  receivedAt: Date;
}
