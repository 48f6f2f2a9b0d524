import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fundedAccount, lifecycle, SMALL } from '../support/accounts';
import { startAppWithKeys, uid, type Harness } from '../support/app';

describe('an admin terminates a runtime over HTTP', () => {
  let h: Harness, admin: string, cp: string;
  beforeAll(async () => ({ h, admin, cp } = await startAppWithKeys()));
  afterAll(() => h.close());

  it('issues one terminate command (reason admin) with an audit row, then nothing more; a settled or unknown runtime is refused', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const runtimeId = uid('rt');
    expect((await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId, ...SMALL, minutes: 30 } })).status).toBe(
      201,
    );
    await h.request('POST', '/v1/events', { key: cp, body: [lifecycle(accountId, runtimeId, 'runtime.started', new Date(), 1)] });

    expect((await h.request('POST', `/v1/admin/runtimes/${runtimeId}/terminate`, { key: cp })).status).toBe(403);
    const first = await h.request('POST', `/v1/admin/runtimes/${runtimeId}/terminate`, { key: admin });
    expect(first).toMatchObject({ status: 200, body: { runtimeId, accountId, status: 'terminating', commandIssued: true } });
    const again = await h.request('POST', `/v1/admin/runtimes/${runtimeId}/terminate`, { key: admin });
    expect(again.body).toMatchObject({ commandIssued: false });
    const details = await h.request('GET', `/v1/reservations/${runtimeId}`, { key: admin });
    expect(details.body.commands).toEqual([expect.objectContaining({ type: 'runtime.terminate', reason: 'admin', acknowledgedAt: null })]);
    const audit = await h.request('GET', `/v1/audit?accountId=${accountId}`, { key: admin });
    const issued = audit.body.items.filter((i: { action: string }) => i.action === 'runtime.terminate_issued');
    expect(issued).toHaveLength(1);
    expect(issued[0].actor).toMatch(/^key:key_/);

    // Its termination acknowledges the command and settles it: nothing is left to terminate.
    await h.request('POST', '/v1/events', {
      key: cp,
      body: [lifecycle(accountId, runtimeId, 'runtime.terminated', new Date(), 2, { reason: 'admin' })],
    });
    const settled = await h.request('POST', `/v1/admin/runtimes/${runtimeId}/terminate`, { key: admin });
    expect(settled.status).toBe(400);
    expect(settled.body.error).toMatchObject({
      code: 'DL_BILLING_REQUEST_INVALID',
      findings: [{ field: 'runtimeId', message: expect.stringContaining('settled') }],
    });
    const unknown = await h.request('POST', `/v1/admin/runtimes/${uid('rt')}/terminate`, { key: admin });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('DL_BILLING_NOT_FOUND');
  });

  it('issues one command when the same termination is asked several times at once (a double-submitted form)', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    for (let trial = 0; trial < 5; trial++) {
      const runtimeId = uid('rt');
      expect((await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId, ...SMALL, minutes: 30 } })).status).toBe(
        201,
      );
      const answers = await Promise.all(
        Array.from({ length: 4 }, () => h.request('POST', `/v1/admin/runtimes/${runtimeId}/terminate`, { key: admin })),
      );
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
      expect(answers.filter((a) => a.body.commandIssued)).toHaveLength(1);
      expect((await h.request('GET', `/v1/reservations/${runtimeId}`, { key: admin })).body.commands).toHaveLength(1);
      const [{ n }] = await h.ds.query(`SELECT count(*)::int AS n FROM outbox WHERE payload->>'runtimeId' = $1`, [runtimeId]);
      expect(n).toBe(1);
    }
  });
});

describe('a service without Kafka, whose topics are named by KAFKA_TOPIC_*', () => {
  let h: Harness, admin: string, cp: string;
  const commands = `ops.commands.${uid('t')}`;
  beforeAll(async () => ({ h, admin, cp } = await startAppWithKeys({ env: { KAFKA_TOPIC_COMMANDS: commands } })));
  afterAll(() => h.close());

  it('writes its terminate command for the configured topic, where a relay with Kafka will send it', async () => {
    expect(h.config.kafka).toBeUndefined();
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const runtimeId = uid('rt');
    expect((await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId, ...SMALL, minutes: 30 } })).status).toBe(
      201,
    );
    await h.request('POST', '/v1/events', { key: cp, body: [lifecycle(accountId, runtimeId, 'runtime.started', new Date(), 1)] });
    expect((await h.request('POST', `/v1/admin/runtimes/${runtimeId}/terminate`, { key: admin })).body).toMatchObject({
      commandIssued: true,
    });
    const rows: { topic: string }[] = await h.ds.query(`SELECT topic FROM outbox WHERE payload->>'runtimeId' = $1`, [runtimeId]);
    expect(rows).toEqual([{ topic: commands }]);
  });
});
