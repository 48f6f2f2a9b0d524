import { describe, expect, it } from 'vitest';
import { fingerprint } from 'src/common/canonical-json';
import type { RuntimeRow } from 'src/metering/runtime-row';
import type { Environment } from 'src/pricing/environment';
import type { ReservationRequest } from './dto/reservation.dto';
import { BODY_DIFFERS, extensionDifferences, requestDifferences, reservedRequest } from './request-differences';

const SMALL: Environment = { name: 'python-simple', sizeClass: 'small' };
const request = (over: Partial<ReservationRequest> = {}): ReservationRequest => ({
  accountId: 'acc_1',
  runtimeId: 'rt_1',
  variant: 'datalayer',
  environment: SMALL,
  minutes: 30,
  ...over,
});

/** The runtime row a reservation of `r` writes (reservation-batch.ts `runtimeInsert`), extended by `extended` minutes. */
function rowOf(r: ReservationRequest, extended = 0): RuntimeRow {
  const { specDigest, ...environment } = r.environment;
  return {
    runtime_id: r.runtimeId,
    account_id: r.accountId,
    user_id: r.userId ?? null,
    agent_id: r.agentId ?? null,
    variant: r.variant,
    environment: environment as Record<string, unknown>,
    spec_digest: specDigest ?? 'sha256:short-form',
    reserved_minutes: r.minutes + extended,
    request_fingerprint: fingerprint(r),
  } as RuntimeRow;
}

describe('reservedRequest', () => {
  it('rebuilds the request a row was reserved with, short form or document, less its extensions', () => {
    const short = request({ userId: 'u_1' });
    expect(reservedRequest(rowOf(short, 20), 20)).toEqual(short);
    const document = request({ environment: { ...SMALL, specDigest: 'sha256:doc' } });
    expect(reservedRequest(rowOf(document), 0)).toEqual(document);
  });

  it('gives nothing for a row that does not hash to its fingerprint', () => {
    expect(reservedRequest(rowOf(request(), 20), 0)).toBeNull();
    expect(
      reservedRequest({ ...rowOf(request({ environment: { ...SMALL, specDigest: 'sha256:doc' } })), spec_digest: null }, 0),
    ).toBeNull();
    expect(reservedRequest({ ...rowOf(request()), request_fingerprint: null }, 0)).toBeNull();
  });
});

describe('requestDifferences', () => {
  it('names each differing field in the order the request lists them, absent ones said so', () => {
    expect(requestDifferences(request({ agentId: 'a' }), request({ userId: 'u', variant: 'e2b', minutes: 45 }))).toEqual([
      { field: 'userId', message: 'absent when reserved, sent "u"' },
      { field: 'agentId', message: 'reserved with "a", absent in this request' },
      { field: 'variant', message: 'reserved with "datalayer", sent "e2b"' },
      { field: 'minutes', message: 'reserved with 30, sent 45' },
    ]);
  });

  it('goes into objects on both sides, and names a document by its paths', () => {
    const hinted = (cpu: number, digest?: string) =>
      request({ environment: { ...SMALL, hints: { cpu }, ...(digest ? { specDigest: digest } : {}) } });
    expect(requestDifferences(hinted(1), hinted(0.5))).toEqual([{ field: 'environment.hints.cpu', message: 'reserved with 1, sent 0.5' }]);
    expect(requestDifferences(hinted(1, 'sha256:a'), hinted(0.5, 'sha256:b'))).toEqual([
      { field: 'environment.spec.resources.hints.cpu', message: 'reserved with 1, sent 0.5' },
    ]);
    expect(requestDifferences(hinted(1, 'sha256:a'), hinted(1, 'sha256:b'))).toEqual([
      { field: 'environment.spec', message: 'reserved with a spec of digest sha256:a, sent sha256:b' },
    ]);
    expect(requestDifferences(hinted(1), hinted(1, 'sha256:b'))).toEqual([
      { field: 'environment', message: 'reserved with the short form {name, sizeClass, …}, sent an Environment document' },
    ]);
  });

  it('says the body differs when the reservation cannot be rebuilt', () => {
    expect(requestDifferences(null, request())).toEqual([BODY_DIFFERS]);
  });
});

describe('extensionDifferences', () => {
  it('names the minutes a key extended by, when its record hashes to its fingerprint', () => {
    const prior = { minutes: 30, fingerprint: fingerprint({ runtimeId: 'rt_1', minutes: 30 }) };
    expect(extensionDifferences(prior, 'rt_1', 45)).toEqual([
      { field: 'minutes', message: 'extended by 30 under this Idempotency-Key, sent 45' },
    ]);
    expect(extensionDifferences({ ...prior, minutes: 31 }, 'rt_1', 45)).toEqual([BODY_DIFFERS]);
  });
});
