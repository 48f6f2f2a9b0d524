import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** A command sent to the control plane about a runtime (published through the outbox). */
@Entity({ name: 'runtime_commands' })
@Index('runtime_commands_runtime_idx', ['runtimeId', 'issuedAt'])
@Index('runtime_commands_open_idx', ['runtimeId'], { where: '"acknowledged_at" IS NULL' })
// The spend-limits report's terminations of a period.
@Index('runtime_commands_issued_idx', ['issuedAt'])
export class RuntimeCommand {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'runtime_id', type: 'text' })
  runtimeId: string;

  @Column({ name: 'account_id', type: 'text' })
  accountId: string;

  @Column({ type: 'text' })
  type: string;

  @Column({ type: 'text' })
  reason: string;

  @Column({ name: 'issued_at', type: 'timestamptz' })
  issuedAt: Date;

  @Column({ name: 'acknowledged_at', type: 'timestamptz', nullable: true })
  acknowledgedAt: Date | null;
}
