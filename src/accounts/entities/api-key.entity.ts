import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/** An API key: only its SHA-256 is stored; the key itself is shown once at creation. */
@Entity({ name: 'api_keys' })
export class ApiKey {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ type: 'text', nullable: true })
  name: string | null;

  @Index('api_keys_key_hash_key', { unique: true })
  @Column({ name: 'key_hash', type: 'text' })
  keyHash: string;

  @Column({ type: 'text', array: true })
  scopes: string[];

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;

  /** The admin console's last sign-out with this key: its sessions signed in before it are over. */
  @Column({ name: 'console_signed_out_at', type: 'timestamptz', nullable: true })
  consoleSignedOutAt: Date | null;
}
