import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve as resolvePath } from 'node:path';

/**
 * A port free now, for a process started later. Taken below Linux's ephemeral range (32768–60999):
 * a port from listen(0) is one the kernel also hands to other tests' listeners and to outgoing
 * connections (to PostgreSQL, to the broker), which can take it before the process binds it.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (await canListen(port)) return port;
  }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

export interface ServiceProcess {
  child: ChildProcess;
  port: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Runs the built service (dist/, or the build at `entry`) as a real process with the given
 * environment, and waits until it is ready (unless `waitReady` is false: a process meant to die may
 * do so before it answers). It runs in this process's working directory, or in `cwd`.
 */
export async function startService(
  env: Record<string, string>,
  readyTimeoutMs = 60_000,
  waitReady = true,
  entry = 'dist/src/main.js',
  cwd = process.cwd(),
): Promise<ServiceProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [resolvePath(entry)], {
    cwd,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout?.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (log += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  let dead = false;
  void exited.then(() => (dead = true));
  const deadline = Date.now() + readyTimeoutMs;
  for (; waitReady;) {
    if (dead) throw new Error(`service exited before it was ready:\n${log}`);
    const ok = await fetch(`http://127.0.0.1:${port}/health/ready`)
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`service not ready in time:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    child,
    port,
    exited,
    output: () => log,
    stop: async () => {
      if (!dead) child.kill('SIGTERM');
      await exited;
    },
  };
}
