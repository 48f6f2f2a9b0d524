import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { ConfigModule } from 'src/common/config/config.module';
import { ConfigError, loadConfig } from 'src/common/config/config';
import { PlanCatalog } from './plan-catalog';
import { PlanCatalogModule } from './plan-catalog.module';
import { tempDir } from '../../test/support/temp-dir';

const compile = (env: Record<string, string>) =>
  Test.createTestingModule({ imports: [ConfigModule.forRoot(loadConfig(env)), PlanCatalogModule] }).compile();

describe('PlanCatalogModule', () => {
  it('provides the plan catalog from PLANS_FILE (default config/plans.json)', async () => {
    const app = await compile({});
    const catalog = app.get(PlanCatalog);
    expect(catalog.plan('free').includedCreditsMicros).toBe(50_000_000n);
    expect(catalog.effective('enterprise', { concurrentRuntimes: 5 }).concurrentRuntimes).toBe(5);
    await app.close();
  });

  it('fails at startup naming the file and the bad path', async () => {
    const file = join(tempDir('plans-module-'), 'plans.json');
    writeFileSync(
      file,
      JSON.stringify({ credit: { currency: 'usd', centsPerCredit: 30 }, plans: { free: { name: 'Free' } }, topUpPacks: {} }),
    );
    const error = await compile({ PLANS_FILE: file }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain(`${file}: plans.free.billing`);
  });
});
