import { Column, Entity, Index, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** One runtime as the lifecycle stream has shown it so far. */
@Entity({ name: 'runtimes' })
@Index('runtimes_account_idx', ['accountId'])
export class Runtime {
  @PrimaryColumn({ name: 'runtime_id', type: 'text' })
  runtimeId: string;

  @Column({ name: 'account_id', type: 'text' })
  accountId: string;

  @Column({ name: 'events_count', type: 'integer', default: 0 })
  eventsCount: number;

  @Column({ name: 'last_event_at', type: 'timestamptz', nullable: true })
  lastEventAt: Date | null;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
