import { Module } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { Clock } from 'src/infra/clock/clock';
import { RateCard } from './rate-card';

/**
 * Provides the `RateCard`, loaded and validated from AppConfig.files.rateCard at startup (a bad file
 * stops the service with a message naming the bad path). Needs the global ConfigModule and ClockModule.
 */
@Module({
  providers: [
    {
      provide: RateCard,
      useFactory: (config: AppConfig, clock: Clock) => RateCard.fromFile(config.files.rateCard, () => clock.now()),
      inject: [APP_CONFIG, Clock],
    },
  ],
  exports: [RateCard],
})
export class PricingModule {}
