import { Check, Column, CreateDateColumn, Entity, Index, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** A spend limit of an account, or of one member of it (`user_id`), per calendar month. */
@Entity({ name: 'spend_limits' })
@Index('spend_limits_scope_key', ['accountId', 'scopeUserId'], { unique: true })
@Check('spend_limits_limit_check', `"limit_micros" IS NULL OR "limit_micros" >= 0`)
@Check('spend_limits_period_check', `"period" IN ('month')`)
export class SpendLimit {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'account_id', type: 'text' })
  accountId: string;

  /** '' for the account-wide limit (so the unique key covers it), else the member's user id. */
  @Column({ name: 'scope_user_id', type: 'text', default: '' })
  scopeUserId: string;

  @Column({ type: 'text', default: 'month' })
  period: string;

  /** null: no limit (thresholds are then not evaluated). */
  @Column({ name: 'limit_micros', type: 'bigint', nullable: true })
  limitMicros: string | null;

  @Column({ type: 'integer', array: true, default: () => `'{50,80,100}'` })
  thresholds: number[];

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
