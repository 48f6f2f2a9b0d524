import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fundedAccount, lifecycle } from '../support/accounts';
import { startAppWithKeys, uid, type Harness } from '../support/app';

/** The Environment specification at POST /v1/reservations and in runtime.started: findings, codes, the spec digest. */
describe('environments over HTTP', () => {
  let h: Harness, admin: string, cp: string;
  beforeAll(async () => ({ h, admin, cp } = await startAppWithKeys()));
  afterAll(() => h.close());

  const reserve = (body: unknown) => h.request('POST', '/v1/reservations', { key: cp, body });
  const wallet = async (accountId: string) =>
    (await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body as { total: string; held: string };
  const digest = (canonical: string) => `sha256:${createHash('sha256').update(canonical).digest('hex')}`;
  const A100 = (cuda?: string) => ({ type: 'A100-80GB', count: 1, ...(cuda === undefined ? {} : { cuda }) });
  const terminate = async (accountId: string, runtimeId: string) => {
    const body = [lifecycle(accountId, runtimeId, 'runtime.terminated', new Date(), 99, { reason: 'user' })];
    expect((await h.request('POST', '/v1/events', { key: cp, body })).status).toBe(200);
  };

  const GPU_DOC = {
    apiVersion: 'environments.datalayer.io/v1alpha1',
    kind: 'Environment',
    metadata: { name: 'torch-gpu', labels: { team: 'ml' } },
    spec: {
      base: { ref: 'datalayer/python-cuda:2026.09' },
      resources: { sizeClass: 'gpu-small', accelerator: { type: 'T4', count: 1, cuda: '12.8' }, hints: { cpu: 4, memoryGi: 16 } },
      compatibility: { variants: { required: ['modal'] } },
      packages: ['torch==2.6'],
    },
  };
  const GPU_YAML = `# the same document as YAML, keys in another order
kind: Environment
apiVersion: environments.datalayer.io/v1alpha1
metadata: {name: torch-gpu}
spec:
  packages: ["torch==2.6"]
  compatibility: {variants: {required: [modal], optional: []}}
  resources:
    hints: {memoryGi: 16, cpu: 4}
    accelerator: {cuda: "12.8", count: 1, type: T4}
    sizeClass: gpu-small
  base: {ref: "datalayer/python-cuda:2026.09"}
`;

  it('refuses the names, CUDA versions and accelerators the specification refuses, and holds nothing', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '100.000000' });
    const cases: [Record<string, unknown>, string, { field: string; message: string }][] = [
      [
        { name: 'My Env!! _', sizeClass: 'small' },
        'datalayer',
        { field: 'environment.name', message: expect.stringContaining('DNS-1123 label') as unknown as string },
      ],
      [
        { name: 'kube-foo', sizeClass: 'small' },
        'datalayer',
        { field: 'environment.name', message: 'must not start with "kube-": the prefixes datalayer-, dl-, kube-, system- are reserved' },
      ],
      [
        { name: 'ai', sizeClass: 'gpu-large', accelerator: A100('11.0') },
        'modal',
        {
          field: 'environment.accelerator.cuda',
          message: 'must be the CUDA version of an approved CUDA base (datalayer/python-cuda:2026.09: 12.8)',
        },
      ],
      [
        { name: 'ai', sizeClass: 'gpu-large', accelerator: A100('12.4') },
        'modal',
        {
          field: 'environment.accelerator.cuda',
          message: 'must be the CUDA version of an approved CUDA base (datalayer/python-cuda:2026.09: 12.8)',
        },
      ],
      [
        { name: 'ai', sizeClass: 'gpu-large', accelerator: A100() },
        'modal',
        { field: 'environment.accelerator.cuda', message: 'is required with an accelerator' },
      ],
      [
        { name: 'ai', sizeClass: 'gpu-large', accelerator: 'none' },
        'modal',
        { field: 'environment.accelerator', message: 'is required for the gpu-large size class' },
      ],
      [
        { name: 'ai', sizeClass: 'gpu-small', accelerator: A100('12.8'), base: { ref: 'datalayer/python-cpu:2026.09' } },
        'modal',
        {
          field: 'environment.base.ref',
          message:
            'datalayer/python-cpu:2026.09 has no CUDA; the gpu-small size class needs a CUDA base (datalayer/python-cuda:2026.09: 12.8)',
        },
      ],
      [
        { name: 'py', sizeClass: 'small', hints: { cpu: 2 } },
        'e2b',
        { field: 'environment.hints.cpu', message: 'must be at most 1, within the small size class (1 vCPU, 1 GiB memory, 10 GiB disk)' },
      ],
    ];
    for (const [environment, variant, finding] of cases) {
      const res = await reserve({ accountId, runtimeId: uid('rt'), variant, environment });
      expect(res.status, JSON.stringify(environment)).toBe(400);
      expect(res.body).toEqual({
        error: {
          code: 'DL_BILLING_REQUEST_INVALID',
          message: 'The request is invalid',
          specCode: 'DL_ENV_SPEC_INVALID',
          findings: [{ ...finding, specCode: 'DL_ENV_SPEC_INVALID' }],
        },
      });
    }
    expect(await wallet(accountId)).toMatchObject({ total: '100.000000', held: '0.000000' });
  });

  it("refuses a variant outside the environment's compatibility as unsupported (422) with both codes", async () => {
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const res = await reserve({
      accountId,
      runtimeId: uid('rt'),
      variant: 'e2b',
      environment: { name: 'py', sizeClass: 'small', compatibility: { variants: { required: ['datalayer'], optional: ['modal'] } } },
    });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      error: {
        code: 'DL_BILLING_CAPABILITY_UNSUPPORTED',
        message: 'The requested environment cannot be priced on this variant',
        specCode: 'DL_ENV_CAPABILITY_UNSUPPORTED',
        findings: [
          {
            field: 'variant',
            message: "e2b is not one of the environment's variants (required: datalayer; optional: modal)",
            specCode: 'DL_ENV_CAPABILITY_UNSUPPORTED',
          },
        ],
      },
    });
  });

  it('reserves the short form as before, with accelerator "none" and hints, and shows its spec digest', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const runtimeId = uid('rt');
    const res = await reserve({
      accountId,
      runtimeId,
      variant: 'datalayer',
      environment: { name: 'python-simple', sizeClass: 'small', accelerator: 'none', hints: { cpu: 1, memoryGi: 0.5 } },
    });
    expect(res.status).toBe(201);
    const expected = digest('{"resources":{"accelerator":"none","hints":{"cpu":1,"memoryGi":0.5},"sizeClass":"small"}}');
    expect(res.body).toMatchObject({ ratePerHour: '1.000000', reserved: '0.166667', specDigest: expected });
    const view = await h.request('GET', `/v1/reservations/${runtimeId}`, { key: cp });
    expect(view.body).toMatchObject({ status: 'reserved', specDigest: expected });

    const plain = await reserve({
      accountId,
      runtimeId: uid('rt'),
      variant: 'datalayer',
      environment: { name: 'python-simple', sizeClass: 'small' },
    });
    expect(plain.body.specDigest).toBe(digest('{"resources":{"accelerator":"none","sizeClass":"small"}}'));
  });

  it('reserves a whole Environment document, as JSON or YAML, with the same spec digest; a changed spec is another body', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '100.000000' });
    const fromJson = uid('rt');
    const json = await reserve({ accountId, runtimeId: fromJson, variant: 'modal', environment: GPU_DOC });
    expect(json.status).toBe(201);
    expect(json.body.ratePerHour).toBe('16.000000');
    expect(json.body.specDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
    const fromYaml = uid('rt');
    const yaml = await reserve({ accountId, runtimeId: fromYaml, variant: 'modal', environment: GPU_YAML });
    expect(yaml.status).toBe(201);
    expect(yaml.body.specDigest).toBe(json.body.specDigest);
    expect((await h.request('GET', `/v1/reservations/${fromYaml}`, { key: cp })).body.specDigest).toBe(json.body.specDigest);

    const again = await reserve({
      accountId,
      runtimeId: fromJson,
      variant: 'modal',
      environment: { ...GPU_DOC, metadata: { name: 'torch-gpu' } },
    });
    expect(again.status).toBe(200);
    expect(again.body.reservationId).toBe(json.body.reservationId);
    const changed = await reserve({
      accountId,
      runtimeId: fromJson,
      variant: 'modal',
      environment: { ...GPU_DOC, spec: { ...GPU_DOC.spec, packages: ['torch==2.7'] } },
    });
    expect(changed.status).toBe(409);
    expect(changed.body.error.code).toBe('DL_BILLING_IDEMPOTENCY_CONFLICT');

    // Usage by environment names it by metadata.name.
    const [row] = await h.ds.query(`SELECT environment->>'name' AS name, size_class, spec_digest FROM runtimes WHERE runtime_id = $1`, [
      fromJson,
    ]);
    expect(row).toEqual({ name: 'torch-gpu', size_class: 'gpu-small', spec_digest: json.body.specDigest });

    const wrong = await reserve({
      accountId,
      runtimeId: uid('rt'),
      variant: 'modal',
      environment: { ...GPU_DOC, apiVersion: 'environments.datalayer.io/v2', metadata: { name: 'system-x' } },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.findings).toEqual([
      { field: 'environment.apiVersion', message: 'must be environments.datalayer.io/v1alpha1', specCode: 'DL_ENV_SPEC_INVALID' },
      {
        field: 'environment.metadata.name',
        message: 'must not start with "system-": the prefixes datalayer-, dl-, kube-, system- are reserved',
        specCode: 'DL_ENV_SPEC_INVALID',
      },
    ]);
    await terminate(accountId, fromJson);
    await terminate(accountId, fromYaml);
  });

  it('reserves a runtime.started that carries a document on the fly with its digest, and tells one with an invalid environment to terminate', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '100.000000' });
    const good = uid('rt');
    const bad = uid('rt');
    const now = new Date();
    const events = [
      lifecycle(accountId, good, 'runtime.started', now, 1, { variant: 'modal', environment: GPU_YAML }),
      lifecycle(accountId, bad, 'runtime.started', now, 1, {
        variant: 'modal',
        environment: { name: 'ai', sizeClass: 'gpu-large', accelerator: A100('11.0') },
      }),
    ];
    expect((await h.request('POST', '/v1/events', { key: cp, body: events })).body).toEqual({ accepted: 2, duplicates: 0 });
    const reserved = await h.request('GET', `/v1/reservations/${good}`, { key: cp });
    const json = await reserve({ accountId, runtimeId: uid('rt'), variant: 'modal', environment: GPU_DOC });
    expect(reserved.body).toMatchObject({ status: 'running', ratePerHour: '16.000000', specDigest: json.body.specDigest, commands: [] });
    const told = await h.request('GET', `/v1/reservations/${bad}`, { key: cp });
    expect(told.body.commands).toEqual([expect.objectContaining({ type: 'runtime.terminate', reason: 'unreserved' })]);
    await terminate(accountId, good);
    await terminate(accountId, bad);
  });
});
