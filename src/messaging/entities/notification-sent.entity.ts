import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * Notifications already enqueued, by cause: a notification is written to the outbox only in the
 * transaction that inserts its cause here, so each cause notifies once.
 */
@Entity({ name: 'notifications_sent' })
@Index('notifications_sent_account_idx', ['accountId', 'createdAt'])
export class NotificationSent {
  /** `<type>:<account>:<what>`, e.g. `quota.exhausted:acc_1:runs:2026-12-01T00:00:00.000Z`. */
  @PrimaryColumn({ type: 'text' })
  cause: string;

  @Column({ name: 'account_id', type: 'text' })
  accountId: string;

  @Column({ type: 'text' })
  type: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
