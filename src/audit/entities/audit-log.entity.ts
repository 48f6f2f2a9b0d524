import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * The append-only audit log (a trigger refuses UPDATE and DELETE). Rows form hash chains, one per
 * account (`chain` = the account id, or `*` for rows without an account): `seq` counts from 1 in
 * its chain and `hash` = SHA-256 of canonicalJson({prevHash, record, seq}).
 */
/**
 * The audit actions that record a change of an account's plan terms, with the terms before it: an
 * admin's `PUT /v1/admin/accounts/{id}/plan` and Stripe's moves (`plan.changed`), the control plane's
 * `POST /v1/accounts` (`account.updated`). Their rows have an index of their own (a cycle's credits
 * are granted on the terms the account had when its invoice was paid: plans/plan-history.ts).
 */
export const PLAN_CHANGE_ACTIONS = ['plan.changed', 'account.updated'] as const;
export const PLAN_CHANGES_SQL = `"action" IN (${PLAN_CHANGE_ACTIONS.map((a) => `'${a}'`).join(', ')})`;

@Entity({ name: 'audit_log' })
@Index('audit_log_chain_seq_key', ['chain', 'seq'], { unique: true })
@Index('audit_log_account_idx', ['accountId', 'id'])
@Index('audit_log_plan_changes_idx', ['chain', 'at'], { where: PLAN_CHANGES_SQL })
// `GET /v1/audit?from=&to=`: a range's rows, whatever their ids (a row's `at` can be days out of id
// order); the id beside it checks a page's cursor in the index.
@Index('audit_log_at_idx', ['at', 'id'])
export class AuditLog {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ type: 'text' })
  chain: string;

  @Column({ type: 'bigint' })
  seq: string;

  @Column({ type: 'timestamptz' })
  at: Date;

  @Column({ type: 'text' })
  actor: string;

  @Column({ type: 'text' })
  action: string;

  @Column({ name: 'account_id', type: 'text', nullable: true })
  accountId: string | null;

  @Column({ type: 'jsonb', nullable: true })
  before: unknown;

  @Column({ type: 'jsonb', nullable: true })
  after: unknown;

  @Column({ name: 'correlation_id', type: 'text', nullable: true })
  correlationId: string | null;

  @Column({ name: 'prev_hash', type: 'text' })
  prevHash: string;

  @Column({ type: 'text' })
  hash: string;
}
