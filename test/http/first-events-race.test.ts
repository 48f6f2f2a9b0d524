import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fundedAccount, lifecycle } from '../support/accounts';
import { startApp, uid, type Harness } from '../support/app';

/** Requests that make the same unknown runtime known at the same time. */
describe('first events of a runtime racing each other', () => {
  let h: Harness;
  let admin: string;
  let cp: string;

  beforeAll(async () => {
    h = await startApp();
    admin = await h.key('admin');
    cp = await h.key('control-plane');
  });
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
});
