import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fundedAccount, lifecycle, SMALL } from '../support/accounts';
import { startAppWithKeys, uid, type Harness } from '../support/app';

/** Requests that make the same unknown runtime known at the same time. */
describe('first events of a runtime racing each other', () => {
  let h: Harness, admin: string, cp: string;
  beforeAll(async () => ({ h, admin, cp } = await startAppWithKeys()));
  afterAll(() => h.close());

  it('applies both of two concurrent requests that each bring the first heartbeat of the same new runtime (no 500)', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    for (let trial = 0; trial < 8; trial++) {
      const runtimeId = uid('rt_new');
      const answers = await Promise.all(
        [2, 3].map((seq) =>
          h.request('POST', '/v1/events', { key: cp, body: [lifecycle(accountId, runtimeId, 'runtime.heartbeat', new Date(), seq)] }),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual([200, 200]);
      // Heartbeats count by seq: seq 3 applied, and seq 2 counted only if it came first.
      const [row] = await h.ds.query(`SELECT account_id, heartbeat_seq::int AS seq FROM runtimes WHERE runtime_id = $1`, [runtimeId]);
      expect(row).toEqual({ account_id: accountId, seq: 3 });
    }
  });

  it("never applies another account's heartbeat to a runtime reserved at the same time: one of the two is refused", async () => {
    const [owner, other] = [
      await fundedAccount(h, admin, { credits: '10.000000' }),
      await fundedAccount(h, admin, { credits: '10.000000' }),
    ];
    for (let trial = 0; trial < 12; trial++) {
      const runtimeId = uid('rt_race');
      const [reserved, beat] = await Promise.all([
        h.request('POST', '/v1/reservations', { key: cp, body: { accountId: owner, runtimeId, ...SMALL, minutes: 6 } }),
        h.request('POST', '/v1/events', { key: cp, body: [lifecycle(other, runtimeId, 'runtime.heartbeat', new Date(), 2)] }),
      ]);
      const [row] = await h.ds.query(`SELECT account_id, heartbeat_seq::int AS seq FROM runtimes WHERE runtime_id = $1`, [runtimeId]);
      if (reserved.status === 201) {
        expect(beat.status).toBe(400);
        expect(row).toEqual({ account_id: owner, seq: null });
      } else {
        expect([reserved.status, beat.status]).toEqual([409, 200]);
        expect(row).toEqual({ account_id: other, seq: 2 });
      }
    }
  });
});
