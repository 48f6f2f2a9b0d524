import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataSource } from 'typeorm';
import { normalizeJson } from '../../src/audit/audit-hash';
import { AuditService } from '../../src/audit/audit.service';
import { canonicalJson } from '../../src/common/canonical-json';
import { canonicalJsonSql, jsonSql } from '../../src/common/canonical-json-sql';
import { formatCredits, formatCreditsSql } from '../../src/common/money';
import { ManualClock } from '../../src/infra/clock/clock';
import { Accounts, Posting } from '../../src/ledger/core/posting';
import {
  expiryFingerprint,
  expiryInstant,
  expiryNotification,
  expiryWrite,
  grantAudit,
  grantFingerprint,
} from '../../src/ledger/grant-rules';
import { LedgerService } from '../../src/ledger/ledger.service';
import { grantInBulk } from '../../src/ledger/operations/grant-in-bulk';
import { enqueueNotifications, notificationMessage, type Notification } from '../../src/messaging/notifications';
import { freshDatabase, type FreshDatabase } from '../support/fresh-database';

// The monthly reset's rows are built by PostgreSQL (fingerprints, audit records, notifications); their definitions are the
// TypeScript ones. These tests hold the two equal, with the values that tell string escaping and number formatting apart.
const TRICKY_STRINGS = [
  '',
  'plain',
  'quote " and \' apostrophe',
  'back\\slash \\" \\u0041',
  'controls \b\f\n\r\t \u0001\u001f \u007f',
  'unicode é ß 中文 Ж',
  'astral 😀 𝄞',
  'separators \u2028 \u2029',
  'html </script> & <b>',
  '\uffff\ue000 private use',
  '{"json":"inside"}',
];
const BIGINTS = [0n, 1n, -1n, 999_999n, 1_000_000n, -1_000_001n, 2n ** 53n + 1n, -(2n ** 53n) - 3n, 2n ** 63n - 1n, -(2n ** 63n) + 1n];

describe('the bulk grant built by PostgreSQL, against its TypeScript definitions', () => {
  let db: FreshDatabase;
  let ds: DataSource;

  beforeAll(async () => {
    db = await freshDatabase('bulksql');
    ds = db.ds;
  });
  afterAll(() => db?.drop());

  const sql = async (expression: string, values: unknown[]): Promise<string> => {
    const [row] = await ds.query<{ v: string }[]>(`SELECT (${expression}) AS v`, values);
    return row!.v;
  };

  it('writes canonical JSON as canonicalJson does: strings, integers beyond 2^53, instants, nulls, nested objects', async () => {
    const shape = canonicalJsonSql(
      jsonSql.object({
        zeta: jsonSql.text('$1::text'),
        alpha: jsonSql.integer('$2::bigint'),
        at: jsonSql.instant('$3::timestamptz'),
        nested: jsonSql.object({ b: jsonSql.text('$4::text'), a: jsonSql.constant('constant'), n: jsonSql.constant(null) }),
        raw: jsonSql.json('$5::text'),
        Upper: jsonSql.constant(7),
      }),
    );
    const check = async (s: string | null, n: bigint | null, at: Date | null, raw: unknown): Promise<void> => {
      const expected = canonicalJson({ zeta: s, alpha: n, at, nested: { b: s, a: 'constant', n: null }, raw, Upper: 7 });
      const got = await sql(shape, [s, n?.toString() ?? null, at, s, raw === null ? null : canonicalJson(raw)]);
      expect(got).toBe(expected);
    };
    for (const s of TRICKY_STRINGS) await check(s, 1n, new Date('2027-02-01T00:00:00.000Z'), { k: s });
    for (const n of BIGINTS) await check('x', n, new Date('1970-01-01T00:00:00.001Z'), [n]);
    await check(null, null, null, null);
    // Any text PostgreSQL can hold (no NUL, no lone surrogate), any instant of years 1–9999.
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'binary', maxLength: 40 }).filter((s) => !s.includes('\u0000') && !/\p{Surrogate}/u.test(s)),
        fc.bigInt({ min: -(2n ** 63n) + 1n, max: 2n ** 63n - 1n }),
        fc.date({ min: new Date('0001-01-01T00:00:00.000Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true }),
        async (s, n, at) => check(s, n, at, { s }),
      ),
      { numRuns: 150 },
    );
  });

  it('formats credits as formatCredits does, negative and beyond 2^53 included', async () => {
    for (const n of BIGINTS.filter((b) => b > -(2n ** 63n) + 1n)) {
      expect(await sql(formatCreditsSql('$1::bigint'), [n.toString()])).toBe(formatCredits(n));
    }
  });

  it("writes the grant and expiry transactions, the audit row and credits.expired as the ledger's TypeScript defines them", async () => {
    const clock = new ManualClock(new Date('2031-12-10T10:00:00.000Z'));
    const audit = new AuditService(ds, clock);
    const ledger = new LedgerService(ds, audit, clock);
    const [withDue, withHold, bare] = ['bulk.sql:due', 'bulk.sql-hold', 'bulk_sql_bare'];
    await ds.query(`INSERT INTO accounts (id, kind, plan) SELECT unnest($1::text[]), 'user', 'free'`, [[withDue, withHold, bare]]);
    const oldExpiry = new Date('2032-01-01T00:00:00.000Z');
    for (const [accountId, amount, grantId] of [
      [withDue, 2n ** 53n + 11n, 'old.grant:1'],
      [withDue, 3n, 'old.grant:0'],
      [withHold, 10_000_000n, 'old-grant_2'],
    ] as const) {
      await ledger.grantTx({
        accountId,
        source: 'plan_allowance',
        amount,
        expiresAt: oldExpiry,
        grantId,
        idempotencyKey: `old:${grantId}`,
        reason: 'old',
        actor: 'test',
      });
    }
    await ledger.grantTx({
      accountId: withHold,
      source: 'admin',
      amount: 5_000_000n,
      expiresAt: null,
      idempotencyKey: 'k',
      reason: 'r',
      actor: 't',
    });
    await ledger.createHoldTx({ accountId: withHold, holdId: 'hold_bulk', amount: 2_500_000n, reference: 'rt', idempotencyKey: 'h' });

    const now = new Date('2032-01-01T00:00:00.000Z');
    clock.set(now);
    const expiresAt = new Date('2032-02-01T00:00:00.000Z');
    const reason = TRICKY_STRINGS.join(' | ');
    const actor = 'system:"reset" é 😀';
    const correlationId = 'corr \\ "x" \n 中';
    const grants = [
      { accountId: withDue, grantId: 'new.grant:due', amount: 2n ** 60n + 7n, reason },
      { accountId: withHold, grantId: 'new-grant_hold', amount: 50_000_000n, reason: `${reason} 2` },
      { accountId: bare, grantId: 'new_grant_bare', amount: 1n, reason: '' },
    ];
    const before = new Map(
      (
        await ds.query<{ account_id: string; version: string }[]>(
          `SELECT account_id, version::text AS version FROM wallets WHERE account_id = ANY($1)`,
          [grants.map((g) => g.accountId)],
        )
      ).map((w) => [w.account_id, BigInt(w.version)]),
    );
    const topic = 'notifications.test';
    const result = await ds.transaction((em) =>
      grantInBulk(em, audit, {
        grants,
        source: 'plan_allowance',
        expiresAt,
        idempotencyKey: 'allowance:x',
        actor,
        correlationId,
        now,
        notificationsTopic: topic,
      }),
    );
    expect(result).toEqual({
      granted: [bare, withHold, withDue].sort(),
      grantedMicros: 2n ** 60n + 7n + 50_000_000n + 1n,
      expiredGrants: 3,
      expiredMicros: 2n ** 53n + 14n + 7_500_000n,
      inDebt: [],
    });

    const txs = await ds.query<
      {
        account_id: string;
        kind: string;
        idempotency_key: string;
        fingerprint: string;
        amount: string;
        grant_id: string;
        total_after: string;
        held_after: string;
        available_after: string;
        explanation: unknown;
        entries: { account: string; amount: string }[];
        created_at: Date;
      }[]
    >(
      `SELECT t.account_id, t.kind, t.idempotency_key, t.fingerprint, t.amount::text AS amount, t.grant_id, t.total_after::text AS total_after,
         t.held_after::text AS held_after, t.available_after::text AS available_after, t.explanation,
         (SELECT json_agg(json_build_object('account', e.ledger_account, 'amount', e.amount::text) ORDER BY e.line) FROM ledger_entries e
          WHERE e.transaction_id = t.id) AS entries, t.created_at
       FROM ledger_transactions t WHERE t.account_id = ANY($1) AND t.created_at = ANY($2) ORDER BY t.id`,
      [grants.map((g) => g.accountId), [now, expiryInstant(oldExpiry)]],
    );
    const entriesOf = (p: Posting) => p.entries().map((e) => ({ account: e.account, amount: e.amount.toString() }));
    const expected: unknown[] = [];
    const held = new Map([[withHold, 2_500_000n]]);
    // The hold took its 2.5 from the grant that expires first; the admin grant's 5 stay available.
    const available = new Map([[withHold, 5_000_000n]]);
    const dueOf = new Map([
      [
        withDue,
        [
          { grantId: 'old.grant:0', remaining: 3n },
          { grantId: 'old.grant:1', remaining: 2n ** 53n + 11n },
        ],
      ],
      [withHold, [{ grantId: 'old-grant_2', remaining: 7_500_000n }]],
    ]);
    for (const g of [...grants].sort((a, b) => (a.accountId < b.accountId ? -1 : 1))) {
      const wallet = { available: available.get(g.accountId) ?? 0n, held: held.get(g.accountId) ?? 0n, debt: 0n };
      const due = dueOf.get(g.accountId) ?? [];
      due.forEach((d, i) => {
        const w = expiryWrite(
          { accountId: g.accountId, grantId: d.grantId, source: 'plan_allowance', remaining: d.remaining, expiresAt: oldExpiry },
          wallet,
          (before.get(g.accountId) ?? 0n) + BigInt(i),
        );
        expect(w.fingerprint).toBe(expiryFingerprint(d.grantId));
        expected.push({
          account_id: g.accountId,
          kind: 'expiry',
          idempotency_key: w.idempotencyKey,
          fingerprint: w.fingerprint,
          amount: w.amount.toString(),
          grant_id: d.grantId,
          total_after: w.after.total.toString(),
          held_after: w.after.held.toString(),
          available_after: w.after.available.toString(),
          explanation: normalizeJson(w.explanation),
          entries: w.entries.map((e) => ({ account: e.account, amount: e.amount.toString() })),
          // Dated at the last millisecond of the grant's validity, not when the reset ran.
          created_at: w.at,
        });
      });
      expected.push({
        account_id: g.accountId,
        kind: 'grant',
        idempotency_key: 'allowance:x',
        fingerprint: grantFingerprint({ ...g, source: 'plan_allowance', expiresAt, priority: 0, reference: null }),
        amount: g.amount.toString(),
        grant_id: g.grantId,
        total_after: (wallet.available + g.amount + wallet.held).toString(),
        held_after: wallet.held.toString(),
        available_after: (wallet.available + g.amount).toString(),
        explanation: normalizeJson({ source: 'plan_allowance', reason: g.reason, actor, expiresAt, priority: 0, repaid: 0n }),
        entries: entriesOf(new Posting().move(Accounts.issued, Accounts.grant(g.grantId), g.amount)),
        created_at: now,
      });
    }
    expect(txs).toEqual(expected);

    // One credits.granted row per account, what grantAudit says, in a chain `audit verify` accepts.
    const rows = await ds.query<{ account_id: string; actor: string; correlation_id: string; before: unknown; after: unknown }[]>(
      `SELECT account_id, actor, correlation_id, before, after FROM audit_log WHERE action = 'credits.granted' AND at = $1 ORDER BY account_id COLLATE "C"`,
      [now],
    );
    expect(rows).toEqual(
      [...grants]
        .sort((a, b) => (a.accountId < b.accountId ? -1 : 1))
        .map((g) => ({
          account_id: g.accountId,
          actor,
          correlation_id: correlationId,
          ...(normalizeJson(
            grantAudit({
              grantId: g.grantId,
              source: 'plan_allowance',
              amount: g.amount,
              expiresAt,
              before: { available: available.get(g.accountId) ?? 0n, held: held.get(g.accountId) ?? 0n, debt: 0n },
              expired: dueOf.get(g.accountId) ?? [],
            }),
          ) as object),
        })),
    );
    expect(await audit.verify()).toMatchObject({ ok: true });

    const notes = await ds.query<{ topic: string; key: string; payload: unknown }[]>(
      `SELECT topic, key, payload FROM outbox WHERE payload->>'type' = 'credits.expired' ORDER BY id`,
    );
    expect(notes).toEqual(
      [...dueOf]
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .flatMap(([accountId, due]) =>
          due.map((d) =>
            expiryNotification(
              topic,
              { accountId, grantId: d.grantId, source: 'plan_allowance', remaining: d.remaining, expiresAt: oldExpiry },
              now,
            ),
          ),
        ),
    );
    for (const g of grants) expect(await ledger.reconcile(g.accountId)).toEqual([]);
    const versions = await ds.query<{ account_id: string; version: string }[]>(
      `SELECT account_id, version::text AS version FROM wallets WHERE account_id = ANY($1)`,
      [grants.map((g) => g.accountId)],
    );
    for (const v of versions) {
      expect(BigInt(v.version)).toBe((before.get(v.account_id) ?? 0n) + 1n + BigInt(dueOf.get(v.account_id)?.length ?? 0));
    }
  });

  it('enqueues notifications with the ids and shape notificationMessage gives, in their order', async () => {
    const at = new Date('2032-03-01T00:00:00.000Z');
    const items: Notification[] = TRICKY_STRINGS.map((s, i) => ({
      type: 'credits.granted',
      accountId: `acc_${i}`,
      cause: `credits.granted:${s}`,
      data: { text: s, n: i, nested: { list: [s, null, true] } },
    }));
    await ds.transaction((em) => enqueueNotifications(em, 'topic.bulk', at, items));
    const found = await ds.query<{ topic: string; key: string; payload: unknown }[]>(
      `SELECT topic, key, payload FROM outbox WHERE topic = 'topic.bulk' ORDER BY id`,
    );
    expect(found).toEqual(items.map((n) => notificationMessage('topic.bulk', n, at)));
  });
});
