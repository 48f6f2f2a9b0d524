import { Writable } from 'node:stream';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { describe, expect, it } from 'vitest';
import { withCorrelation } from '../context/correlation';
import { createLogger, PinoLogger } from './logger';

function capture(level = 'info', callerReportsFailures = false): { logger: PinoLogger; lines: () => Record<string, unknown>[] } {
  let text = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return {
    logger: new PinoLogger(createLogger(level, sink), callerReportsFailures),
    lines: () =>
      text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe('logs', () => {
  it('write one JSON object a line with level, ISO time, pid and hostname', () => {
    const { logger, lines } = capture();
    logger.log('listening', 'Main');
    expect(lines()).toEqual([
      expect.objectContaining({
        level: 'info',
        msg: 'listening',
        context: 'Main',
        pid: process.pid,
        hostname: expect.any(String),
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      }),
    ]);
  });

  it('carry the request id on every line written while serving a request, and a job or event id otherwise', () => {
    const { logger, lines } = capture();
    withCorrelation({ id: 'req-1', kind: 'request' }, () => logger.warn('slow', 'Ledger'));
    withCorrelation({ id: 'job:expiry-sweep:1', kind: 'job' }, () => logger.log({ msg: 'swept', voided: 2 }, 'Sweeper'));
    logger.log('outside', 'Main');
    const [a, b, c] = lines();
    expect(a).toMatchObject({ reqId: 'req-1', msg: 'slow', level: 'warn' });
    expect(b).toMatchObject({ correlationId: 'job:expiry-sweep:1', correlationKind: 'job', voided: 2, msg: 'swept' });
    expect(c).not.toHaveProperty('reqId');
  });

  it('redact secrets that reach a logged object', () => {
    const { logger, lines } = capture();
    logger.log(
      { msg: 'config', stripe: { secretKey: 'sk_live_x', webhookSecret: 'whsec_x' }, headers: { authorization: 'Bearer k' } },
      'Main',
    );
    const text = JSON.stringify(lines());
    expect(text).not.toMatch(/sk_live_x|whsec_x|Bearer k/);
    expect(lines()[0]).toMatchObject({ stripe: { secretKey: '[redacted]' }, headers: { authorization: '[redacted]' } });
  });

  it("keep Nest's route-mapping lines out of info, and honour the level", () => {
    const { logger, lines } = capture('info');
    logger.log('Mapped {/v1/accounts, POST} route', 'RouterExplorer');
    logger.log('AppModule dependencies initialized', 'InstanceLoader');
    logger.debug('detail', 'Ledger');
    logger.error(new Error('boom'));
    expect(lines()).toEqual([
      expect.objectContaining({ level: 'error', msg: 'boom', err: expect.objectContaining({ stack: expect.stringContaining('boom') }) }),
    ]);
  });

  it("leave a failure to start to the caller's own line: no line from Nest's ExceptionHandler", async () => {
    @Module({ providers: [{ provide: 'broken', useFactory: () => Promise.reject(new Error('cannot start')) }] })
    class Broken {}
    const { logger, lines } = capture('info', true);
    await expect(NestFactory.createApplicationContext(Broken, { logger, abortOnError: false })).rejects.toThrow('cannot start');
    expect(lines()).toEqual([]);
  });
});
