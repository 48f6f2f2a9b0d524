import { canonicalJson, sha256Hex } from 'src/common/canonical-json';
import type { Environment } from './environment';

/**
 * The spec digest of the Environment specification: `sha256:` + the hex SHA-256 of the RFC 8785
 * (JCS) serialization of `spec` with its defaults written out; metadata is not part of it. It lets
 * a charge be traced to the environment version it priced.
 */
export function specDigestOf(spec: Record<string, unknown>): string {
  return `sha256:${sha256Hex(canonicalJson(spec))}`;
}

/**
 * The parts of `spec` billing reads, with the defaults written out: `resources.accelerator` is
 * `"none"` when there is none, and `compatibility.variants` lists `required` and `optional` (empty
 * when not given). A short form `{name, sizeClass, accelerator?, hints?, base?, compatibility?}`
 * is the document whose spec is exactly this (its name is metadata), so both digest alike.
 */
export function specOf(environment: Environment): Record<string, unknown> {
  return {
    ...(environment.base ? { base: environment.base } : {}),
    resources: {
      sizeClass: environment.sizeClass,
      accelerator: environment.accelerator ?? 'none',
      ...(environment.hints ? { hints: environment.hints } : {}),
    },
    ...(environment.compatibility ? { compatibility: environment.compatibility } : {}),
  };
}

/** The spec digest of an environment in any form. */
export function environmentDigest(environment: Environment): string {
  return environment.specDigest ?? specDigestOf(specOf(environment));
}

/** The environment as stored on a runtime and priced: its digest is kept beside it, not in it. */
export function withoutDigest(environment: Environment): Environment {
  const { specDigest: _digest, ...rest } = environment;
  return rest;
}
