import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/**
 * A runtime month whose events were archived: its `runtime_events` partition detached (`cli events
 * archive`). Its runtimes were all settled for good; an event of theirs that still comes is refused.
 */
@Entity({ name: 'event_month_archives' })
export class EventMonthArchive {
  @PrimaryColumn({ type: 'date' })
  month: string;

  /** The detached partition's name: the table to dump, then drop. */
  @Column({ type: 'text' })
  partition: string;

  @Column({ type: 'integer' })
  runtimes: number;

  @CreateDateColumn({ name: 'archived_at', type: 'timestamptz' })
  archivedAt: Date;
}
