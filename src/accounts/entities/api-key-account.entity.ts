import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * The accounts an API key is scoped to (one row per `account:<id>` scope), written with the key: an
 * account's keys are read newest first a page at a time from their own index, not by testing every
 * key's scopes.
 */
@Entity({ name: 'api_key_accounts' })
@Index('api_key_accounts_newest_idx', ['accountId', 'createdAt', 'keyId'])
export class ApiKeyAccount {
  @PrimaryColumn({ name: 'account_id', type: 'text' })
  accountId: string;

  @PrimaryColumn({ name: 'key_id', type: 'text' })
  keyId: string;

  /** The key's creation time (its `api_keys.created_at`): the order of the account's keys. */
  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
