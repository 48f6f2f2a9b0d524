import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditService } from '../../src/audit/audit.service';
import { uid } from '../support/app';
import { buildForTest, removeBuild, runCli } from '../support/cli';
import { c, startLedger, type LedgerHarness } from '../support/ledger';

/**
 * The audit log's hash chains, checked by `audit verify` run as a real process. Tampering needs
 * the append-only trigger out of the way: the test uses session_replication_role = replica (what
 * someone with superuser access could do) and puts every row back afterwards, since the run's
 * database is shared with the other test files.
 */
describe('audit log: hash chains and `audit verify`', () => {
  let h: LedgerHarness;
  let build: string;
  let admin: pg.Client;
  let env: Record<string, string>;

  beforeAll(async () => {
    [h, build] = await Promise.all([startLedger(), buildForTest()]);
    env = { DATABASE_URL: h.config.database.url!, LOG_LEVEL: 'warn', KAFKA_BROKERS: '' };
    admin = new pg.Client({ connectionString: h.config.database.url });
    await admin.connect();
    await admin.query('SET session_replication_role = replica');
  });
  afterAll(async () => {
    await admin?.end();
    await h?.close();
    if (build) await removeBuild(build);
  });

  async function someHistory(): Promise<string> {
    const acc = await h.account(uid('aud'));
    await h.ledger.grantTx({
      accountId: acc,
      source: 'admin',
      amount: c(5),
      expiresAt: null,
      idempotencyKey: uid('k'),
      reason: 'audit test',
      actor: 'test',
    });
    const holdId = uid('h');
    await h.ledger.createHoldTx({ accountId: acc, holdId, amount: c(2), reference: null, idempotencyKey: holdId });
    await h.ledger.settleHoldTx({ holdId, amount: c(1), actor: 'test', correlationId: 'corr-1' });
    return acc;
  }

  it('chains every row of an account: who, what, when, before/after, correlation id', async () => {
    const acc = await someHistory();
    const { items } = await h.app.get(AuditService).list({ accountId: acc, limit: 10 });
    expect(items.map((r) => r.action)).toEqual(['hold.settled', 'hold.created', 'credits.granted', 'account.created']);
    const settled = items[0]!;
    expect(settled).toMatchObject({ actor: 'test', chain: acc, seq: 4, correlationId: 'corr-1', accountId: acc });
    expect(settled.before).toMatchObject({ status: 'reserved', held: '2.000000' });
    expect(settled.after).toMatchObject({ status: 'settled', charged: '1.000000', released: '1.000000' });
    expect(items[0]!.prevHash).toBe(items[1]!.hash);
    await expect(h.ds.query(`UPDATE audit_log SET actor = 'x' WHERE account_id = $1`, [acc])).rejects.toThrow(/append-only/);
  });

  it('passes on an untouched log, finds an edited row, then a deleted one', async () => {
    const acc = await someHistory();
    const clean = await runCli(build, ['audit', 'verify'], env);
    expect(clean.stderr).toBe('');
    expect(clean.code).toBe(0);
    expect(JSON.parse(clean.stdout)).toMatchObject({ ok: true });

    const [row] = (await admin.query(`SELECT id, after FROM audit_log WHERE account_id = $1 AND action = 'credits.granted'`, [acc])).rows;
    try {
      // Someone edits an amount.
      await admin.query(`UPDATE audit_log SET after = jsonb_set(after, '{available}', '"500.000000"') WHERE id = $1`, [row.id]);
      const edited = await runCli(build, ['audit', 'verify'], env);
      expect(edited.code).toBe(1);
      const report = JSON.parse(edited.stdout);
      expect(report.problem).toMatchObject({ chain: acc, seq: 2, id: String(row.id), reason: 'hash mismatch' });
      expect(report.problem.row.after.available).toBe('500.000000');
      expect(edited.stderr).toContain('hash mismatch');
    } finally {
      await admin.query(`UPDATE audit_log SET after = $2 WHERE id = $1`, [row.id, row.after]);
    }
    expect((await h.app.get(AuditService).verify()).ok).toBe(true);

    const [victim] = (await admin.query(`SELECT * FROM audit_log WHERE account_id = $1 AND seq = 2`, [acc])).rows;
    try {
      // Someone deletes a row from the middle of a chain.
      await admin.query(`DELETE FROM audit_log WHERE id = $1`, [victim.id]);
      const deleted = await runCli(build, ['audit', 'verify'], env);
      expect(deleted.code).toBe(1);
      expect(JSON.parse(deleted.stdout).problem).toMatchObject({ chain: acc, seq: 2, reason: 'missing row' });
    } finally {
      const cols = Object.keys(victim);
      await admin.query(
        `INSERT INTO audit_log (${cols.join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')})`,
        cols.map((k) => ((k === 'before' || k === 'after') && victim[k] !== null ? JSON.stringify(victim[k]) : victim[k])),
      );
    }
    expect((await h.app.get(AuditService).verify()).ok).toBe(true);
  });

  it('finds the newest row of a chain deleted (the chain head remembers it)', async () => {
    const acc = await someHistory();
    const [last] = (await admin.query(`SELECT * FROM audit_log WHERE account_id = $1 ORDER BY seq DESC LIMIT 1`, [acc])).rows;
    try {
      await admin.query(`DELETE FROM audit_log WHERE id = $1`, [last.id]);
      const result = await h.app.get(AuditService).verify();
      expect(result).toMatchObject({ ok: false, problem: { chain: acc, seq: 4, reason: 'missing row' } });
    } finally {
      const cols = Object.keys(last);
      await admin.query(
        `INSERT INTO audit_log (${cols.join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')})`,
        cols.map((k) => ((k === 'before' || k === 'after') && last[k] !== null ? JSON.stringify(last[k]) : last[k])),
      );
    }
    expect((await h.app.get(AuditService).verify()).ok).toBe(true);
  });

  it('keeps one unforked chain under concurrent writers', async () => {
    const acc = await h.account(uid('aud'));
    await h.ledger.grantTx({
      accountId: acc,
      source: 'admin',
      amount: c(100),
      expiresAt: null,
      idempotencyKey: uid('k'),
      reason: 'x',
      actor: 'test',
    });
    const holds = Array.from({ length: 30 }, () => uid('h'));
    await Promise.all(
      holds.map((holdId) => h.ledger.createHoldTx({ accountId: acc, holdId, amount: c(1), reference: null, idempotencyKey: holdId })),
    );
    await Promise.all(holds.map((holdId) => h.ledger.settleHoldTx({ holdId, amount: c(0.5) })));
    const seqs = (await h.ds.query(`SELECT seq::int AS seq FROM audit_log WHERE chain = $1 ORDER BY seq`, [acc])).map(
      (r: { seq: number }) => r.seq,
    );
    // The account's creation, the grant, then a row for each hold's creation and one for its settlement.
    expect(seqs).toEqual(Array.from({ length: 62 }, (_, i) => i + 1));
    const v = await h.app.get(AuditService).verify();
    expect(v.ok ? 'ok' : JSON.stringify(v.problem)).toBe('ok');
  });

  it('creates and revokes API keys from the CLI, audited', async () => {
    const created = await runCli(build, ['keys', 'create', '--scopes', 'reports,account:acc_cli', '--name', 'ops'], env);
    expect(created.code).toBe(0);
    const key = JSON.parse(created.stdout);
    expect(key).toMatchObject({
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^dlb_/),
      scopes: ['reports', 'account:acc_cli'],
    });
    const res = await h.request('GET', '/v1/audit?limit=5', { key: key.key });
    expect(res.status).toBe(200);
    expect(
      res.body.items.some((r: { action: string; after: { id: string } }) => r.action === 'api_key.created' && r.after.id === key.id),
    ).toBe(true);
    const revoked = await runCli(build, ['keys', 'revoke', key.id], env);
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout)).toMatchObject({ id: key.id, revokedAt: expect.any(String) });
    const [audited] = await h.ds.query(`SELECT actor, after FROM audit_log WHERE action = 'api_key.revoked' AND after->>'id' = $1`, [
      key.id,
    ]);
    expect(audited).toMatchObject({ actor: 'cli', after: { id: key.id, revoked: true } });
    const bad = await runCli(build, ['keys', 'create', '--scopes', 'root'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--scopes');
  });

  it('names what is wrong in a command line: an id or account that does not exist, a month out of range, a missing command (exit 2)', async () => {
    const runs = await Promise.all(
      [
        ['keys', 'revoke', 'key_nothing_here'],
        ['ledger', 'reconcile', '--account', 'acc_nobody_here'],
        ['events', 'archive', '2026-13'],
        [],
        ['reports'],
        ['keys'],
      ].map((args) => runCli(build, args, env)),
    );
    expect(runs.map((r) => [r.code, r.stdout, r.stderr.split('\n')[0]])).toEqual([
      [2, '', 'keys revoke: no API key key_nothing_here'],
      [2, '', '--account: no account acc_nobody_here'],
      [2, '', 'events archive needs the month, YYYY-MM'],
      [2, '', 'a command is needed'],
      [2, '', 'reports needs one of: usage, credits, seats, spend-limits, reconciliation, top-consumers, ancillary'],
      [2, '', 'keys needs one of: create, revoke'],
    ]);
  });
});
