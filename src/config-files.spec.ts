import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { ConfigModule } from './common/config/config.module';
import { ConfigError, loadConfig } from './common/config/config';
import { ClockModule } from './infra/clock/clock.module';
import { ConfigFilesModule, readConfigFiles } from './config-files';
import { PlanCatalog } from './plan-catalog/plan-catalog';
import { PlanCatalogModule } from './plan-catalog/plan-catalog.module';
import { PricingModule } from './pricing/pricing.module';
import { RateCard } from './pricing/rate-card';
import { tempDir } from '../test/support/temp-dir';

describe('the configuration files', () => {
  it('are read once: the modules use what was read before the start, not the files', async () => {
    const dir = tempDir('config-files-');
    copyFileSync('config/plans.json', join(dir, 'plans.json'));
    copyFileSync('config/rate-card.json', join(dir, 'rate-card.json'));
    const config = loadConfig({ PLANS_FILE: join(dir, 'plans.json'), RATE_CARD_FILE: join(dir, 'rate-card.json') });
    const files = readConfigFiles(config.files);
    // Gone after the read: a module that read its file again could not start.
    rmSync(dir, { recursive: true });
    const app = await Test.createTestingModule({
      imports: [ConfigModule.forRoot(config), ConfigFilesModule.forRoot(files), ClockModule, PlanCatalogModule, PricingModule],
    }).compile();
    expect(app.get(PlanCatalog)).toBe(files.plans);
    expect(app.get(RateCard).versions.map((v) => v.version)).toEqual(files.rateCard.map((v) => v.version));
    await app.close();
  });

  it('name every bad file in one error', () => {
    const config = loadConfig({ PLANS_FILE: '/nonexistent/plans.json', RATE_CARD_FILE: '/nonexistent/rate-card.json' });
    let error: unknown;
    try {
      readConfigFiles(config.files);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      expect.stringContaining('PLANS_FILE: cannot read /nonexistent/plans.json'),
      expect.stringContaining('RATE_CARD_FILE: cannot read /nonexistent/rate-card.json'),
    ]);
  });
});
