import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';
import type { GrantSource } from '../core/types';

/** A credit bucket. `remaining` is the stored balance of ledger account `grant:<id>` (unheld credits). */
@Entity({ name: 'grants' })
@Index('grants_account_idx', ['accountId'])
/** An account's live grants, whatever its history: what every ledger read of a wallet walks. */
@Index('grants_live_idx', ['accountId'], { where: `"status" = 'active'` })
@Index('grants_expiry_idx', ['expiresAt'], { where: `"status" = 'active' AND "expires_at" IS NOT NULL` })
@Check('grants_source_check', `"source" IN ('plan_allowance', 'top_up', 'admin', 'promotion')`)
@Check('grants_status_check', `"status" IN ('active', 'expired')`)
@Check('grants_amount_check', `"amount" > 0`)
@Check('grants_remaining_check', `"remaining" >= 0 AND "remaining" <= "amount"`)
/** An expired grant keeps nothing (what it had went to `expired`), so live grants are all the active ones. */
@Check('grants_expired_empty_check', `"status" = 'active' OR "remaining" = 0`)
export class Grant {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'account_id', type: 'text' })
  accountId: string;

  @Column({ type: 'text' })
  source: GrantSource;

  @Column({ type: 'bigint' })
  amount: string;

  @Column({ type: 'bigint' })
  remaining: string;

  /** Lower burns first among grants of the same expiry. */
  @Column({ type: 'integer' })
  priority: number;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  @Column({ type: 'text', default: 'active' })
  status: 'active' | 'expired';

  @Column({ type: 'text' })
  reason: string;

  @Column({ type: 'text', nullable: true })
  reference: string | null;

  @Column({ type: 'bigint', default: 0 })
  version: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
