import { Check, Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * What one hold took from one grant: `held` at creation and increases, then at resolution how much
 * of it was `charged` and `released`. Corrections after settlement change `charged` (and may add
 * rows with held = 0 for grants charged or that paid down the hold's debt).
 */
@Entity({ name: 'hold_allocations' })
@Check('hold_allocations_amounts_check', `"held" >= 0 AND "charged" >= 0 AND "released" >= 0 AND "released" <= "held"`)
export class HoldAllocation {
  @PrimaryColumn({ name: 'hold_id', type: 'text' })
  holdId: string;

  @PrimaryColumn({ name: 'grant_id', type: 'text' })
  grantId: string;

  @Column({ type: 'bigint', default: 0 })
  held: string;

  @Column({ type: 'bigint', default: 0 })
  charged: string;

  @Column({ type: 'bigint', default: 0 })
  released: string;
}
