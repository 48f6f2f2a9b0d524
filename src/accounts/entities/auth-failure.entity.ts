import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * Failed authentications of one client in its current window, shared by every instance (owned by
 * `accounts/auth/failure-store.ts`). A client is an IPv4 address or an IPv6 /64; the scope tells
 * API keys from Stripe webhook signatures. Rows whose window has passed are deleted.
 */
@Entity({ name: 'auth_failures' })
@Check('auth_failures_failures_check', '"failures" > 0')
export class AuthFailure {
  @PrimaryColumn({ type: 'text' })
  scope: string;

  @PrimaryColumn({ type: 'text' })
  client: string;

  @Index('auth_failures_window_start_idx')
  @Column({ name: 'window_start', type: 'timestamptz' })
  windowStart: Date;

  @Column({ type: 'integer' })
  failures: number;
}
