import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import type { TestProject } from 'vitest/node';

const SCRIPT = resolve('scripts/kafka/kafka.sh');

/** Uses KAFKA_BROKERS when set; otherwise starts the project's single-node broker and stops it after. */
export default function setup(project: TestProject): () => void {
  const configured = process.env.KAFKA_BROKERS;
  if (configured) {
    project.provide('kafkaBrokers', configured);
    return () => undefined;
  }
  const out = execFileSync('bash', [SCRIPT, 'start'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const line = out
    .trim()
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('KAFKA_BROKERS='));
  if (!line) throw new Error(`the Kafka script did not print KAFKA_BROKERS:\n${out}`);
  const wasRunning = /already running/i.test(out);
  project.provide('kafkaBrokers', line.slice('KAFKA_BROKERS='.length));
  return () => {
    if (!wasRunning) execFileSync('bash', [SCRIPT, 'stop'], { stdio: 'inherit' });
  };
}
