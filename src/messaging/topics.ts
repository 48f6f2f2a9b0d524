import type { AppConfig, KafkaConfig } from 'src/common/config/config';
import { DEFAULT_TOPICS } from 'src/common/config/config.schema';

/** The topics outbox messages go to; without Kafka, the contract's names (the rows wait in the outbox). */
export function topicsOf(config: Partial<Pick<AppConfig, 'kafka'>>): KafkaConfig['topics'] {
  return config.kafka?.topics ?? DEFAULT_TOPICS;
}
