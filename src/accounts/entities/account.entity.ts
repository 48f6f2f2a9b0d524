import { Check, Column, CreateDateColumn, Entity, Index, PrimaryColumn, UpdateDateColumn } from 'typeorm';

export type AccountKind = 'user' | 'organization';
export type AccountStatus = 'active' | 'suspended';
/** Why an account is suspended: each cause is lifted only by whoever placed it (an admin; a paid invoice). */
export const SUSPENSION_CAUSES = ['admin', 'non_payment'] as const;
export type SuspensionCause = (typeof SUSPENSION_CAUSES)[number];

@Entity({ name: 'accounts' })
@Check('accounts_kind_check', `"kind" IN ('user', 'organization')`)
// Which plans exist is the plan catalog's to say (config/plans.json); the table checks only the id's form.
@Check('accounts_plan_format_check', `"plan" ~ '^[a-z][a-z0-9_-]{0,31}$'`)
@Check('accounts_status_check', `"status" IN ('active', 'suspended')`)
@Check('accounts_suspended_for_check', `"suspended_for" <@ ARRAY['admin', 'non_payment']::text[]`)
// Suspended exactly while a cause holds it.
@Check('accounts_suspended_for_status_check', `("status" = 'suspended') = (cardinality("suspended_for") > 0)`)
// The accounts whose contract puts them on a billing cycle: the cycle-allowances job reads them every minute.
@Index('accounts_billing_cycle_idx', ['id'], { where: `("plan_overrides" ->> 'period') = 'billing_cycle'` })
export class Account {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ type: 'text' })
  kind: AccountKind;

  /** A plan id of the plan catalog. */
  @Column({ type: 'text' })
  plan: string;

  @Column({ type: 'text', nullable: true })
  name: string | null;

  @Column({ type: 'text', default: 'active' })
  status: AccountStatus;

  /** The causes of a suspension (SUSPENSION_CAUSES, sorted); empty while active. */
  @Column({ name: 'suspended_for', type: 'text', array: true, default: () => `'{}'` })
  suspendedFor: SuspensionCause[];

  /**
   * When an admin last waived a suspension for non-payment: the subscription's past-due spell that began
   * before it does not suspend the account again (a later one does).
   */
  @Column({ name: 'non_payment_waived_at', type: 'timestamptz', nullable: true })
  nonPaymentWaivedAt: Date | null;

  /** Per-account plan terms laid over the plan's defaults (src/plans: planOverridesSchema); Enterprise is all overrides. */
  @Column({ name: 'plan_overrides', type: 'jsonb', nullable: true })
  planOverrides: Record<string, unknown> | null;

  /** The subscription's billing cycle anchor (Team; or Enterprise overridden to billing_cycle). */
  @Column({ name: 'billing_cycle_anchor', type: 'timestamptz', nullable: true })
  billingCycleAnchor: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
