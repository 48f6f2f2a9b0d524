import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fundedAccount, SMALL } from '../support/accounts';
import { startApp, uid, type Harness } from '../support/app';
import { eventually, produce } from '../support/kafka';
import { plannedHistory, shuffled } from '../support/scenarios';

const RUNTIMES = 400;
const EVENTS_PER_RUNTIME = 25; // 10,000 events in all
const ACCOUNTS = 20;

describe('any delivery order gives the same balances (10,000 events on the real broker)', () => {
  let h: Harness;
  let admin: string;
  let cp: string;

  beforeAll(async () => {
    h = await startApp({ kafka: true });
    admin = await h.key('admin');
    cp = await h.key('control-plane');
  });
  afterAll(() => h.close());

  it('in order once, and shuffled with every event duplicated: identical charges, wallets and ledger sums', async () => {
    const tag = uid('run');
    const histories = Array.from({ length: RUNTIMES }, (_, r) => plannedHistory(r + 1, EVENTS_PER_RUNTIME));
    const t0 = Date.now() - 4 * 3600_000;

    // Two mirror worlds: A receives the events in order, B shuffled and duplicated.
    const worlds = ['a', 'b'] as const;
    const accounts: Record<string, string[]> = { a: [], b: [] };
    for (const w of worlds) {
      for (let i = 0; i < ACCOUNTS; i++) {
        accounts[w]!.push(await fundedAccount(h, admin, { id: `${tag}_${w}_acc${i}`, credits: '100.000000' }));
      }
    }
    const runtimeOf = (w: string, r: number) => `${tag}_${w}_rt${r}`;
    const accountOf = (w: string, r: number) => accounts[w]![r % ACCOUNTS]!;
    for (const w of worlds) {
      for (let r = 0; r < RUNTIMES; r++) {
        const res = await h.request('POST', '/v1/reservations', {
          key: cp,
          body: { accountId: accountOf(w, r), runtimeId: runtimeOf(w, r), ...SMALL, minutes: 60 },
        });
        expect(res.status).toBe(201);
      }
    }
    const messages = (w: string) =>
      histories.flatMap((history, r) =>
        history.map((e) => ({
          key: accountOf(w, r),
          value: {
            id: `${runtimeOf(w, r)}_e${e.n}`,
            type: e.type,
            occurredAt: new Date(t0 + e.offsetMs).toISOString(),
            accountId: accountOf(w, r),
            runtimeId: runtimeOf(w, r),
            seq: e.seq,
            data: e.data,
          },
        })),
      );
    const inOrder = messages('a');
    const chaos = shuffled([...messages('b'), ...messages('b')], 7);
    expect(inOrder).toHaveLength(RUNTIMES * EVENTS_PER_RUNTIME);
    const topic = h.config.topics.lifecycle;
    for (let i = 0; i < inOrder.length; i += 2000) await produce(topic, inOrder.slice(i, i + 2000));
    for (let i = 0; i < chaos.length; i += 2000) await produce(topic, chaos.slice(i, i + 2000));

    // In order, every event is applied once (stored, or a heartbeat counted by its runtime). Shuffled, a
    // heartbeat that comes after a later one of its runtime is a duplicate (no money, not counted): the
    // shuffled copy is complete once every event other than a heartbeat is stored (heartbeats change no charge).
    const applied = async (prefix: string) =>
      (await h.ds.query(`SELECT coalesce(sum(events_count), 0)::int AS n FROM runtimes WHERE runtime_id LIKE $1`, [`${prefix}%`]))[0]
        .n as number;
    const stored = async (prefix: string) =>
      (await h.ds.query(`SELECT count(*)::int AS n FROM runtime_events WHERE runtime_id LIKE $1`, [`${prefix}%`]))[0].n as number;
    const sessionEvents = inOrder.filter((m) => m.value.type !== 'runtime.heartbeat').length;
    await eventually(
      async () =>
        (await applied(`${tag}_a_`)) === inOrder.length &&
        (await stored(`${tag}_a_`)) === sessionEvents &&
        (await stored(`${tag}_b_`)) === sessionEvents,
      90_000,
      'all events',
    );

    const runtimes = async (w: string) =>
      (await h.ds.query(
        `SELECT substring(runtime_id from '_rt[0-9]+$') AS r, status, charged::text, released::text, closed_ms::text
         FROM runtimes WHERE runtime_id LIKE $1 ORDER BY 1`,
        [`${tag}_${w}_%`],
      )) as unknown[];
    const a = await runtimes('a');
    expect(a).toHaveLength(RUNTIMES);
    expect(await runtimes('b')).toEqual(a);

    const wallets = async (w: string) =>
      Promise.all(accounts[w]!.map(async (id) => (await h.request('GET', `/v1/accounts/${id}/wallet`, { key: admin })).body)).then((list) =>
        list.map((b: any) => ({ total: b.total, held: b.held, available: b.available })),
      );
    const wa = await wallets('a');
    expect(await wallets('b')).toEqual(wa);
    expect(wa.some((b) => b.total !== '100.000000')).toBe(true);

    // Ledger sums per account: whatever corrections B needed, the net movements are the same.
    const sums = async (w: string) =>
      (await h.ds.query(
        `SELECT grants_balance::text, holds_balance::text, issued::text, consumed::text, expired::text, debt::text
         FROM wallets WHERE account_id = ANY($1) ORDER BY substring(account_id from '_acc[0-9]+$')`,
        [accounts[w]],
      )) as unknown[];
    expect(await sums('b')).toEqual(await sums('a'));
  });
});
