import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReservationsService } from 'src/reservations/reservations.service';
import { fundedAccount, lifecycle, SMALL } from '../support/accounts';
import { startAppWithKeys, uid, type Harness } from '../support/app';
import { events, ok } from '../support/requests';

/**
 * A reservation replayed with another body, or an extension's Idempotency-Key with other minutes: the
 * 409 names each field that differs, with what the reservation was made with and what was sent.
 */
describe('idempotency conflicts over HTTP', () => {
  let h: Harness, admin: string, cp: string;
  beforeAll(async () => ({ h, admin, cp } = await startAppWithKeys()));
  afterAll(() => h.close());

  const reserve = (body: Record<string, unknown>) => h.request('POST', '/v1/reservations', { key: cp, body });
  const extend = (runtimeId: string, minutes: number, key: string) =>
    h.request('POST', `/v1/reservations/${runtimeId}/extend`, { key: cp, body: { minutes }, headers: { 'idempotency-key': key } });
  const terminated = (accountId: string, runtimeId: string) =>
    events(h, cp, lifecycle(accountId, runtimeId, 'runtime.terminated', new Date(), 9, { reason: 'user' }));
  /** The whole 409 body of a reservation replayed with another body. */
  const conflict = (runtimeId: string, findings: { field: string; message: string }[]) => ({
    error: {
      code: 'DL_BILLING_IDEMPOTENCY_CONFLICT',
      message: `Runtime ${runtimeId} already has a reservation made with a different request`,
      findings,
      reservationId: `res_${runtimeId}`,
    },
  });

  const GPU = { name: 'torch-gpu', sizeClass: 'gpu-small', accelerator: { type: 'T4', count: 1, cuda: '12.8' } };
  const DOC = {
    apiVersion: 'environments.datalayer.io/v1alpha1',
    kind: 'Environment',
    metadata: { name: 'torch-gpu' },
    spec: {
      base: { ref: 'datalayer/python-cuda:2026.09' },
      resources: { sizeClass: 'gpu-small', accelerator: { type: 'T4', count: 1, cuda: '12.8' } },
      packages: ['torch==2.6'],
    },
  };

  it('names the one field that differs, then two, with what the reservation was made with and what was sent', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '5.000000' });
    const runtimeId = uid('rt');
    await ok(reserve({ accountId, runtimeId, ...SMALL, minutes: 30 }), 201);
    const one = await reserve({ accountId, runtimeId, ...SMALL, minutes: 45 });
    expect(one.status).toBe(409);
    expect(one.body).toEqual(conflict(runtimeId, [{ field: 'minutes', message: 'reserved with 30, sent 45' }]));
    const two = await reserve({ accountId, runtimeId, ...SMALL, variant: 'e2b', minutes: 45 });
    expect(two.status).toBe(409);
    expect(two.body).toEqual(
      conflict(runtimeId, [
        { field: 'variant', message: 'reserved with "datalayer", sent "e2b"' },
        { field: 'minutes', message: 'reserved with 30, sent 45' },
      ]),
    );
    // Nothing was reserved again.
    expect(await ok(h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin }))).toMatchObject({ held: '0.500000' });
    await terminated(accountId, runtimeId);
  });

  it('names a nested field of the environment by its path', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '50.000000' });
    const runtimeId = uid('rt');
    await ok(reserve({ accountId, runtimeId, variant: 'modal', environment: GPU }), 201);
    const other = await reserve({
      accountId,
      runtimeId,
      variant: 'modal',
      environment: { ...GPU, accelerator: { ...GPU.accelerator, count: 2 } },
    });
    expect(other.status).toBe(409);
    expect(other.body).toEqual(conflict(runtimeId, [{ field: 'environment.accelerator.count', message: 'reserved with 1, sent 2' }]));
    const small = await reserve({ accountId, runtimeId, ...SMALL });
    expect(small.body).toEqual(
      conflict(runtimeId, [
        { field: 'variant', message: 'reserved with "modal", sent "datalayer"' },
        { field: 'environment.name', message: 'reserved with "torch-gpu", sent "python-simple"' },
        { field: 'environment.sizeClass', message: 'reserved with "gpu-small", sent "small"' },
        { field: 'environment.accelerator', message: 'reserved with {"count":1,"cuda":"12.8","type":"T4"}, absent in this request' },
      ]),
    );
    await terminated(accountId, runtimeId);
  });

  it('says absent for an optional field added or left out', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '5.000000' });
    const runtimeId = uid('rt');
    await ok(reserve({ accountId, runtimeId, agentId: 'agent-1', ...SMALL }), 201);
    const changed = await reserve({ accountId, runtimeId, userId: 'u_2', ...SMALL });
    expect(changed.status).toBe(409);
    expect(changed.body).toEqual(
      conflict(runtimeId, [
        { field: 'userId', message: 'absent when reserved, sent "u_2"' },
        { field: 'agentId', message: 'reserved with "agent-1", absent in this request' },
      ]),
    );
    await terminated(accountId, runtimeId);
  });

  it('keeps a replay of the same body 200 whatever its key order, a default written out or "none" for no accelerator', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '5.000000' });
    const runtimeId = uid('rt');
    const first = await ok(reserve({ accountId, runtimeId, userId: 'u_1', ...SMALL }), 201);
    const reordered = await reserve({
      environment: { sizeClass: 'small', name: 'python-simple', accelerator: 'none' },
      variant: 'datalayer',
      userId: 'u_1',
      runtimeId,
      accountId,
      minutes: 10,
    });
    expect(reordered.status).toBe(200);
    expect(reordered.body.reservationId).toBe(first.reservationId);
    // Extended, its replay is still the same request, and another body names the minutes it was made with.
    expect(await ok(extend(runtimeId, 20, uid('x')))).toMatchObject({ minutes: 30 });
    expect(await ok(reserve({ accountId, runtimeId, userId: 'u_1', ...SMALL }))).toMatchObject({ minutes: 30 });
    const other = await reserve({ accountId, runtimeId, userId: 'u_1', ...SMALL, minutes: 30 });
    expect(other.body).toEqual(conflict(runtimeId, [{ field: 'minutes', message: 'reserved with 10, sent 30' }]));
    await terminated(accountId, runtimeId);
  });

  it("names an Idempotency-Key's extension minutes", async () => {
    const accountId = await fundedAccount(h, admin, { credits: '5.000000' });
    const runtimeId = uid('rt');
    await ok(reserve({ accountId, runtimeId, ...SMALL, minutes: 30 }), 201);
    expect(await ok(extend(runtimeId, 30, 'ext-1'))).toMatchObject({ minutes: 60 });
    expect(await ok(extend(runtimeId, 30, 'ext-1'))).toMatchObject({ minutes: 60 });
    const other = await extend(runtimeId, 45, 'ext-1');
    expect(other.status).toBe(409);
    expect(other.body).toEqual({
      error: {
        code: 'DL_BILLING_IDEMPOTENCY_CONFLICT',
        message: 'This Idempotency-Key was used for a different extension',
        findings: [{ field: 'minutes', message: 'extended by 30 under this Idempotency-Key, sent 45' }],
      },
    });
    await terminated(accountId, runtimeId);
  });

  it("names a document's fields by the document's paths, its other spec keys by its digest, and the other form", async () => {
    const accountId = await fundedAccount(h, admin, { credits: '50.000000' });
    const runtimeId = uid('rt');
    const made = await ok(reserve({ accountId, runtimeId, variant: 'modal', environment: DOC }), 201);
    // Metadata other than the name is not part of the request: the same reservation.
    const labelled = { ...DOC, metadata: { name: 'torch-gpu', labels: { team: 'ml' } } };
    expect((await reserve({ accountId, runtimeId, variant: 'modal', environment: labelled })).status).toBe(200);
    const resized = { ...DOC, spec: { ...DOC.spec, resources: { ...DOC.spec.resources, sizeClass: 'gpu-large' } } };
    expect((await reserve({ accountId, runtimeId, variant: 'modal', environment: resized })).body).toEqual(
      conflict(runtimeId, [{ field: 'environment.spec.resources.sizeClass', message: 'reserved with "gpu-small", sent "gpu-large"' }]),
    );
    const repackaged = { ...DOC, spec: { ...DOC.spec, packages: ['torch==2.7'] } };
    const sent = await reserve({ accountId, runtimeId, variant: 'modal', environment: repackaged });
    expect(sent.body.error.findings).toEqual([
      {
        field: 'environment.spec',
        message: expect.stringMatching(new RegExp(`^reserved with a spec of digest ${made.specDigest}, sent sha256:[0-9a-f]{64}$`)),
      },
    ]);
    expect(sent.body.error.findings[0].message).not.toContain(`sent ${made.specDigest}`);
    const short = { name: 'torch-gpu', sizeClass: 'gpu-small', accelerator: DOC.spec.resources.accelerator, base: DOC.spec.base };
    expect((await reserve({ accountId, runtimeId, variant: 'modal', environment: short })).body).toEqual(
      conflict(runtimeId, [
        { field: 'environment', message: 'reserved with an Environment document, sent the short form {name, sizeClass, …}' },
      ]),
    );
    await terminated(accountId, runtimeId);
  });

  it('says the body differs, without fields, for a reservation whose row does not keep its request (made before spec digests)', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '50.000000' });
    const runtimeId = uid('rt');
    await ok(reserve({ accountId, runtimeId, variant: 'modal', environment: DOC }), 201);
    await h.ds.query(`UPDATE runtimes SET spec_digest = NULL WHERE runtime_id = $1`, [runtimeId]);
    const other = await reserve({ accountId, runtimeId, variant: 'modal', environment: DOC, minutes: 20 });
    expect(other.body).toEqual(
      conflict(runtimeId, [
        {
          field: 'body',
          message:
            'differs from the request the reservation was made with (which fields cannot be told: the reservation predates keeping them)',
        },
      ]),
    );
    await terminated(accountId, runtimeId);
  });

  it('answers a replay with another body decided in a batch with the same 409 as one decided alone', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '20.000000' });
    const runtimeId = uid('rt');
    await ok(reserve({ accountId, runtimeId, ...SMALL, minutes: 30 }), 201);
    const alone = await reserve({ accountId, runtimeId, ...SMALL, minutes: 45 });
    const reservations = h.app.get(ReservationsService);
    const before = { ...reservations.stats };
    const others = Array.from({ length: 8 }, () => uid('rt'));
    const answers = await Promise.all([
      ...others.map((id) => reserve({ accountId, runtimeId: id, ...SMALL })),
      ...[0, 1, 2].map(() => reserve({ accountId, runtimeId, ...SMALL, minutes: 45 })),
    ]);
    // Some batch decided several launches.
    expect(reservations.stats.decided - before.decided).toBeGreaterThan(reservations.stats.batches - before.batches);
    expect(answers.slice(0, 8).map((r) => r.status)).toEqual(Array(8).fill(201));
    for (const replay of answers.slice(8)) {
      expect(replay.status).toBe(409);
      expect(replay.body).toEqual(alone.body);
    }
    expect(alone.body).toEqual(conflict(runtimeId, [{ field: 'minutes', message: 'reserved with 30, sent 45' }]));
    for (const id of [runtimeId, ...others]) await terminated(accountId, id);
  });
});
