import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { AuditService } from 'src/audit/audit.service';
import { sha256Hex } from 'src/common/canonical-json';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { inTransaction, rows } from 'src/common/database/transaction';
import { BillingException } from 'src/common/errors/billing.exception';
import type { Principal } from 'src/common/auth/scopes';

/** An account's key as its page shows it. */
export interface AccountKeyView {
  id: string;
  name: string | null;
  scopes: string[];
  createdAt: string;
  revokedAt: string | null;
}

interface KeyRow {
  id: string;
  name: string | null;
  scopes: string[];
  created_at: Date;
  revoked_at: Date | null;
}

function keyView(k: KeyRow): AccountKeyView {
  return {
    id: k.id,
    name: k.name,
    scopes: k.scopes,
    createdAt: k.created_at.toISOString(),
    revokedAt: k.revoked_at?.toISOString() ?? null,
  };
}

export interface CreatedKey {
  id: string;
  key: string;
  scopes: string[];
  name: string | null;
}

/** API keys: created with a random secret shown once, stored as SHA-256, looked up by hash. */
@Injectable()
export class ApiKeysService implements OnApplicationBootstrap {
  private readonly logger = new Logger('ApiKeys');
  private readonly cache = new Map<string, { principal: Principal | null; until: number }>();

  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly audit: AuditService,
  ) {}

  /**
   * Registers BILLING_ADMIN_API_KEY with the admin scope, so an operator can bootstrap. Each value
   * is a key of its own (`key_bootstrap_<random>`, named in the log line): after a rotation the
   * previous value keeps working until it is revoked by its id, and a revoked value stays revoked
   * when an instance restarts with it.
   */
  async onApplicationBootstrap(): Promise<void> {
    const key = this.config.adminApiKey;
    if (!key) return;
    const [row] = await rows<{ id: string; revoked: boolean }>(
      this.ds,
      `WITH added AS (
         INSERT INTO api_keys (id, name, key_hash, scopes) VALUES ($2, 'bootstrap admin', $1, '{admin}')
         ON CONFLICT (key_hash) DO NOTHING RETURNING id, false AS revoked)
       SELECT id, revoked FROM added UNION ALL SELECT id, revoked_at IS NOT NULL FROM api_keys WHERE key_hash = $1`,
      [sha256Hex(key), `key_bootstrap_${randomBytes(6).toString('hex')}`],
    );
    if (row!.revoked) {
      this.logger.warn(`BILLING_ADMIN_API_KEY is revoked key ${row!.id}: it is not registered again; set a new value`);
      return;
    }
    this.logger.log(`bootstrap admin API key ${row!.id} registered from BILLING_ADMIN_API_KEY`);
  }

  /**
   * Creates a key (audited as `api_key.created`, without the secret, in its account's trail for an
   * account key). `knownAccounts`: an
   * `account:<id>` scope must name an existing account (400 with a finding on the scope otherwise).
   */
  async create(scopes: string[], name: string | null, actor = 'system', opts: { knownAccounts?: boolean } = {}): Promise<CreatedKey> {
    const id = `key_${randomBytes(8).toString('hex')}`;
    const key = `dlb_${randomBytes(32).toString('base64url')}`;
    await inTransaction(this.ds, async (em) => {
      if (opts.knownAccounts) await refuseUnknownAccounts(em, scopes);
      // The key, and a row for each account it is scoped to (that account's list of keys).
      await em.query(
        `WITH k AS (INSERT INTO api_keys (id, name, key_hash, scopes) VALUES ($1, $2, $3, $4) RETURNING id, scopes, created_at)
         INSERT INTO api_key_accounts (account_id, key_id, created_at)
         SELECT DISTINCT substr(s, length('account:') + 1), k.id, k.created_at FROM k, unnest(k.scopes) AS s WHERE s LIKE 'account:%'`,
        [id, name, sha256Hex(key), scopes],
      );
      await this.audit.record(em, { actor, action: 'api_key.created', accountId: accountOf(scopes), after: { id, name, scopes } });
    });
    return { id, key, scopes, name };
  }

  /** Revokes a key (audited as `api_key.revoked` the first time, in its account's trail for an account key). */
  async revoke(id: string, actor = 'system'): Promise<{ id: string; revokedAt: string }> {
    const row = await inTransaction(this.ds, async (em) => {
      const [found] = await rows<{ revoked_at: Date; was_revoked: boolean; scopes: string[] }>(
        em,
        `UPDATE api_keys k SET revoked_at = COALESCE(k.revoked_at, now())
         FROM (SELECT id, revoked_at IS NOT NULL AS was_revoked FROM api_keys WHERE id = $1 FOR UPDATE) old
         WHERE k.id = old.id RETURNING k.revoked_at, old.was_revoked, k.scopes`,
        [id],
      );
      if (found && !found.was_revoked) {
        await this.audit.record(em, {
          actor,
          action: 'api_key.revoked',
          accountId: accountOf(found.scopes),
          before: { id, revoked: false },
          after: { id, revoked: true },
        });
      }
      return found;
    });
    if (!row) throw BillingException.notFound(`API key ${id}`);
    this.cache.clear();
    return { id, revokedAt: row.revoked_at.toISOString() };
  }

  /**
   * A page of the keys scoped to one account (`account:<id>`), newest first, revoked ones included:
   * `size` keys after the key `after` (the last of the previous page), read from the account's own
   * index, and whether more follow (`next`: the last key shown).
   */
  async keysOf(accountId: string, page: { after?: string; size: number }): Promise<{ items: AccountKeyView[]; next: string | null }> {
    let from: { created_at: string } | undefined;
    if (page.after !== undefined) {
      [from] = await rows<{ created_at: string }>(
        this.ds,
        // As text: the key's exact place (microseconds), which a Date would round.
        `SELECT created_at::text AS created_at FROM api_key_accounts WHERE account_id = $1 AND key_id = $2`,
        [accountId, page.after],
      );
      // A key not of this account: nothing follows it.
      if (!from) return { items: [], next: null };
    }
    const found = await rows<KeyRow>(
      this.ds,
      `SELECT k.id, k.name, k.scopes, k.created_at, k.revoked_at
       FROM api_key_accounts a JOIN api_keys k ON k.id = a.key_id
       WHERE a.account_id = $1 AND ($2::timestamptz IS NULL OR (a.created_at, a.key_id) < ($2::timestamptz, $3::text))
       ORDER BY a.created_at DESC, a.key_id DESC
       LIMIT $4`,
      [accountId, from?.created_at ?? null, page.after ?? null, page.size + 1],
    );
    const items = found.slice(0, page.size).map(keyView);
    return { items, next: found.length > page.size ? (items[items.length - 1]?.id ?? null) : null };
  }

  /** One key of an account (scoped to it), revoked or not. */
  async keyOf(accountId: string, keyId: string): Promise<AccountKeyView | null> {
    const [found] = await rows<KeyRow>(
      this.ds,
      `SELECT k.id, k.name, k.scopes, k.created_at, k.revoked_at
       FROM api_key_accounts a JOIN api_keys k ON k.id = a.key_id WHERE a.account_id = $1 AND a.key_id = $2`,
      [accountId, keyId],
    );
    return found ? keyView(found) : null;
  }

  /** A key that is not revoked, by id, with its stored hash (which signs its admin sessions). */
  async liveKey(id: string): Promise<{ id: string; hash: string; scopes: string[]; consoleSignedOutAt: Date | null } | null> {
    const [row] = await rows<{ key_hash: string; scopes: string[]; console_signed_out_at: Date | null }>(
      this.ds,
      `SELECT key_hash, scopes, console_signed_out_at FROM api_keys WHERE id = $1 AND revoked_at IS NULL`,
      [id],
    );
    return row ? { id, hash: row.key_hash, scopes: row.scopes, consoleSignedOutAt: row.console_signed_out_at } : null;
  }

  /** The admin console signed out with this key: its sessions signed in until now are over. */
  async consoleSignedOut(id: string, at: Date): Promise<void> {
    await this.ds.query(`UPDATE api_keys SET console_signed_out_at = $2 WHERE id = $1`, [id, at]);
  }

  /** The principal of a presented key, or null when the key is unknown or revoked. */
  async authenticate(key: string): Promise<Principal | null> {
    const hash = sha256Hex(key);
    const now = Date.now();
    const hit = this.cache.get(hash);
    if (hit && hit.until > now) return hit.principal;
    const rows: { id: string; scopes: string[] }[] = await this.ds.query(
      `SELECT id, scopes FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL`,
      [hash],
    );
    const row = rows[0];
    const principal = row ? { keyId: row.id, scopes: row.scopes } : null;
    // Bounded by forgetting the oldest entry: a spray of unknown keys must not empty the cache of the good ones.
    this.cache.delete(hash);
    this.cache.set(hash, { principal, until: now + this.config.apiKeyCacheTtlMs });
    if (this.cache.size > 10_000) this.cache.delete(this.cache.keys().next().value!);
    return principal;
  }
}

/** Refuses `account:<id>` scopes of accounts that do not exist, each named by its place in `scopes`. */
async function refuseUnknownAccounts(em: EntityManager, scopes: string[]): Promise<void> {
  const named = scopes
    .map((s, i) => ({ i, id: s.startsWith('account:') ? s.slice('account:'.length) : null }))
    .filter((n): n is { i: number; id: string } => n.id !== null);
  if (named.length === 0) return;
  const known = new Set(
    (await rows<{ id: string }>(em, `SELECT id FROM accounts WHERE id = ANY($1)`, [named.map((n) => n.id)])).map((r) => r.id),
  );
  const findings = named
    .filter((n) => !known.has(n.id))
    .map((n) => ({ field: `scopes.${n.i}`, message: `account ${n.id} does not exist` }));
  if (findings.length > 0) throw BillingException.invalid(findings);
}

/** The account a key belongs to (its one `account:<id>` scope), whose audit trail shows the key's creation and revocation. */
function accountOf(scopes: string[]): string | null {
  const accounts = scopes.filter((s) => s.startsWith('account:'));
  return accounts.length === 1 ? accounts[0]!.slice('account:'.length) : null;
}
