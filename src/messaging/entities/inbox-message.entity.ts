import { CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** A processed message id per source, written in the same transaction as the message's effect. */
@Entity({ name: 'inbox' })
export class InboxMessage {
  @PrimaryColumn({ type: 'text' })
  source: string;

  @PrimaryColumn({ name: 'message_id', type: 'text' })
  messageId: string;

  @CreateDateColumn({ name: 'processed_at', type: 'timestamptz' })
  processedAt: Date;
}
