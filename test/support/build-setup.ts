import { execFileSync } from 'node:child_process';

/** Builds dist/ once per run, for tests that spawn the service or the CLI as a real process. */
export default function setup(): void {
  execFileSync('npx', ['nest', 'build'], { stdio: ['ignore', 'ignore', 'inherit'] });
}
