import { Check, Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/** Every membership change applied (HTTP or Kafka): the history that says who held a seat when. */
@Entity({ name: 'account_member_events' })
@Index('account_member_events_account_idx', ['accountId', 'occurredAt'])
@Check('account_member_events_type_check', `"type" IN ('member.added', 'member.removed')`)
@Check('account_member_events_source_check', `"source" IN ('http', 'kafka')`)
export class AccountMemberEvent {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'account_id', type: 'text' })
  accountId: string;

  @Column({ name: 'user_id', type: 'text' })
  userId: string;

  @Column({ type: 'text' })
  type: 'member.added' | 'member.removed';

  @Column({ name: 'occurred_at', type: 'timestamptz' })
  occurredAt: Date;

  @Column({ type: 'text' })
  source: 'http' | 'kafka';

  @CreateDateColumn({ name: 'received_at', type: 'timestamptz' })
  receivedAt: Date;
}
