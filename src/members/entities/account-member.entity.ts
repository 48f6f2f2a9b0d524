import { Check, Column, Entity, Index, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/**
 * A member of an account (seat = active member). One row per (account, user): the state of the
 * latest change by `changed_at` (then `change_id`), so changes applied out of order end the same.
 */
@Entity({ name: 'account_members' })
@Index('account_members_active_idx', ['accountId'], { where: `"active"` })
@Check('account_members_user_check', `length("user_id") BETWEEN 1 AND 256`)
export class AccountMember {
  @PrimaryColumn({ name: 'account_id', type: 'text' })
  accountId: string;

  @PrimaryColumn({ name: 'user_id', type: 'text' })
  userId: string;

  @Column({ type: 'boolean' })
  active: boolean;

  /** When the change that set `active` happened (the event's occurredAt). */
  @Column({ name: 'changed_at', type: 'timestamptz' })
  changedAt: Date;

  /** The id of that change (tie-break for changes at the same instant). */
  @Column({ name: 'change_id', type: 'text' })
  changeId: string;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
