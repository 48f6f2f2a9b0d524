import type { AppConfig, Topics } from 'src/common/config/config';
import { DEFAULT_TOPICS } from 'src/common/config/config.schema';

/**
 * The topics outbox messages go to: those KAFKA_TOPIC_* name, with Kafka configured or not (without
 * it, the rows wait in the outbox for a relay that has it, and it sends each where the row says).
 * Without a configuration (a ledger built by hand in a test), the contract's names.
 */
export function topicsOf(config: Partial<Pick<AppConfig, 'topics'>>): Topics {
  return config.topics ?? DEFAULT_TOPICS;
}
