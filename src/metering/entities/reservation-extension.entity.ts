import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/** One extension of a reservation, keyed by its Idempotency-Key (scoped to the runtime). */
@Entity({ name: 'reservation_extensions' })
@Index('reservation_extensions_runtime_idx', ['runtimeId'])
export class ReservationExtension {
  @PrimaryColumn({ name: 'idempotency_key', type: 'text' })
  idempotencyKey: string;

  @Column({ name: 'runtime_id', type: 'text' })
  runtimeId: string;

  @Column({ type: 'integer' })
  minutes: number;

  @Column({ type: 'bigint' })
  amount: string;

  @Column({ type: 'text' })
  fingerprint: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
