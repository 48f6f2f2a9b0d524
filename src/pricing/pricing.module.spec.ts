import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { ConfigModule } from 'src/common/config/config.module';
import { ConfigError, loadConfig } from 'src/common/config/config';
import { ClockModule } from 'src/infra/clock/clock.module';
import { Clock, ManualClock } from 'src/infra/clock/clock';
import { PricingModule } from './pricing.module';
import { priceEnvironment } from './pricing';
import { TEST_BASES, TEST_RESOURCES } from '../../test/support/rate-card';
import { tempDir } from '../../test/support/temp-dir';
import { RateCard } from './rate-card';

async function compile(env: Record<string, string>, clock: Clock) {
  return Test.createTestingModule({ imports: [ConfigModule.forRoot(loadConfig(env)), ClockModule, PricingModule] })
    .overrideProvider(Clock)
    .useValue(clock)
    .compile();
}

describe('PricingModule', () => {
  it('provides the rate card from RATE_CARD_FILE (default config/rate-card.json), current by the clock', async () => {
    const clock = new ManualClock(new Date('2026-12-02T09:00:00Z'));
    const app = await compile({}, clock);
    const card = app.get(RateCard);
    expect(card.current().version).toBe('2026-12-01');
    expect(priceEnvironment(card, 'modal', { name: 'e', sizeClass: 'small' })).toEqual({
      ratePerHourMicros: 1_000_000n,
      rateCardVersion: '2026-12-01',
    });
    await app.close();
  });

  it('follows the clock to a newer version and keeps the old one by name', async () => {
    const dir = tempDir('pricing-module-');
    const file = join(dir, 'rate-card.json');
    const sizeClasses = { small: '1.000000', medium: '2.000000', large: '7.000000', 'gpu-small': '10.000000', 'gpu-large': '20.000000' };
    writeFileSync(
      file,
      JSON.stringify({
        bases: TEST_BASES,
        versions: [
          { version: 'old', effectiveFrom: '2026-01-01T00:00:00Z', sizeClasses, resources: TEST_RESOURCES, variants: ['e2b'] },
          {
            version: 'new',
            effectiveFrom: '2027-01-01T00:00:00Z',
            sizeClasses: { ...sizeClasses, small: '1.250000' },
            resources: TEST_RESOURCES,
            variants: ['e2b'],
          },
        ],
      }),
    );
    const clock = new ManualClock(new Date('2026-12-31T23:59:59.999Z'));
    const app = await compile({ RATE_CARD_FILE: file }, clock);
    const card = app.get(RateCard);
    expect(card.current().version).toBe('old');
    clock.advance(1);
    expect(card.current().version).toBe('new');
    expect(priceEnvironment(card, 'e2b', { name: 'e', sizeClass: 'small' }).ratePerHourMicros).toBe(1_250_000n);
    expect(priceEnvironment(card.requireVersion('old'), 'e2b', { name: 'e', sizeClass: 'small' }).ratePerHourMicros).toBe(1_000_000n);
    await app.close();
  });

  it('fails at startup naming the file and the bad path', async () => {
    const dir = tempDir('pricing-module-');
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ versions: [{ version: 'v', effectiveFrom: 'now' }] }));
    const error = await compile({ RATE_CARD_FILE: file }, new ManualClock()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain(`${file}: versions.0.effectiveFrom`);
    expect((error as ConfigError).message).toContain(`${file}: versions.0.sizeClasses`);
  });
});
