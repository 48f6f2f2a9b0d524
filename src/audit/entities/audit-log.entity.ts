import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * The append-only audit log (a trigger refuses UPDATE and DELETE). Rows form hash chains, one per
 * account (`chain` = the account id, or `*` for rows without an account): `seq` counts from 1 in
 * its chain and `hash` = SHA-256 of canonicalJson({prevHash, record, seq}).
 */
@Entity({ name: 'audit_log' })
@Index('audit_log_chain_seq_key', ['chain', 'seq'], { unique: true })
@Index('audit_log_account_idx', ['accountId', 'id'])
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
