import { Module } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { Clock } from 'src/infra/clock/clock';
import { RateCard, type RateCardVersion } from './rate-card';

/** The rate card's versions the service read before it started (src/config-files.ts), when it did. */
export const RATE_CARD_READ = Symbol('RATE_CARD_READ');

/**
 * Provides the `RateCard`: of the versions read before the start when there are, else loaded and
 * validated from AppConfig.files.rateCard now (a bad file stops the start with a message naming the
 * bad path). Needs the global ConfigModule and ClockModule.
 */
@Module({
  providers: [
    {
      provide: RateCard,
      useFactory: (config: AppConfig, clock: Clock, read?: RateCardVersion[]) =>
        read ? new RateCard(read, () => clock.now()) : RateCard.fromFile(config.files.rateCard, () => clock.now()),
      inject: [APP_CONFIG, Clock, { token: RATE_CARD_READ, optional: true }],
    },
  ],
  exports: [RateCard],
})
export class PricingModule {}
