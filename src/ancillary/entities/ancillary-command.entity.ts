import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * A `snapshot.flag_for_deletion` command sent to the platform (through the outbox) for a snapshot
 * whose storage its wallet could not pay: one per snapshot and unpaid episode (the id). We never
 * delete anything ourselves. Owned by the ancillary module.
 */
@Entity({ name: 'ancillary_commands' })
export class AncillaryCommand {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'account_id', type: 'text' })
  accountId: string;

  @Column({ name: 'snapshot_id', type: 'text' })
  snapshotId: string;

  @Column({ type: 'text' })
  reason: string;

  /** The first unpaid hour of the episode. */
  @Column({ name: 'unpaid_since', type: 'timestamptz' })
  unpaidSince: Date;

  @Column({ name: 'issued_at', type: 'timestamptz' })
  issuedAt: Date;
}
