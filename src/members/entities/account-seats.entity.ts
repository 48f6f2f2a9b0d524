import { Check, Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * An account's active members (its seats), kept by the database in the transaction that changes
 * them (migration AccountSeats: triggers on account_members): a page or a seat push reads one row,
 * not the active members' index entries. No row: no seat.
 */
@Entity({ name: 'account_seats' })
@Check('account_seats_count_check', `"seats" >= 0`)
export class AccountSeats {
  @PrimaryColumn({ name: 'account_id', type: 'text' })
  accountId: string;

  @Column({ type: 'integer' })
  seats: number;
}
