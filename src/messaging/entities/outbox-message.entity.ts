import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** A message written in the same transaction as its cause; the relay publishes it to Kafka. */
@Entity({ name: 'outbox' })
@Index('outbox_unpublished_idx', ['id'], { where: '"published_at" IS NULL' })
export class OutboxMessage {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ type: 'text' })
  topic: string;

  @Column({ type: 'text' })
  key: string;

  @Column({ type: 'jsonb' })
  payload: Record<string, unknown>;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'published_at', type: 'timestamptz', nullable: true })
  publishedAt: Date | null;
}
