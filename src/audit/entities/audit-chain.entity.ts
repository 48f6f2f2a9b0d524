import { Column, Entity, PrimaryColumn } from 'typeorm';

/** The head of each audit chain: its last seq and hash. Locked (by upsert) last in every transaction. */
@Entity({ name: 'audit_chains' })
export class AuditChain {
  @PrimaryColumn({ type: 'text' })
  chain: string;

  @Column({ type: 'bigint' })
  seq: string;

  @Column({ name: 'prev_hash', type: 'text' })
  prevHash: string;

  @Column({ type: 'text' })
  hash: string;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
