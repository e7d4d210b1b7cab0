// Kafka client (kafkajs) with its log routed through pino.
import { Kafka, logLevel, type LogEntry } from 'kafkajs';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { kafkaSecurity, type KafkaSecuritySettings } from './security.ts';

const LEVELS: Record<number, 'error' | 'warn' | 'info' | 'debug'> = {
  [logLevel.ERROR]: 'error',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'info',
  [logLevel.DEBUG]: 'debug',
};

/**
 * kafkajs logs at ERROR what it is about to retry: every error answer of a broker (Connection: a
 * topic created a moment ago that a broker does not host yet, a coordinator still loading), and
 * every failed attempt of a retried operation (its entry names retryCount: a send to a leader that
 * moved, a broker that is restarting). Whoever asked reports the failure should the retries not
 * help; until then these are warnings, so that a green start, or a broker's restart, logs no error.
 */
function levelOf(entry: LogEntry): 'error' | 'warn' | 'info' | 'debug' {
  const retried = entry.namespace === 'Connection' || entry.log.retryCount !== undefined;
  if (retried && entry.level === logLevel.ERROR) return 'warn';
  return LEVELS[entry.level] ?? 'info';
}

/** The TLS and SASL settings may be absent: a test's cluster of its own is plaintext. */
export function createKafka(config: Pick<Config, 'KAFKA_BROKERS' | 'KAFKA_CLIENT_ID'> & Partial<KafkaSecuritySettings>, log: Logger): Kafka {
  const kafkaLog = log.child({ component: 'kafkajs' });
  return new Kafka({
    clientId: config.KAFKA_CLIENT_ID,
    brokers: config.KAFKA_BROKERS.split(',').map((b) => b.trim()).filter(Boolean),
    ...kafkaSecurity(config),
    connectionTimeout: 3000,
    requestTimeout: 30_000,
    // Waits grow from 200 ms to at most 5 s (kafkajs's cap is 30 s): a client retrying through a
    // broker outage is back within about 5 s of the broker's return; 15 retries still span ~55 s, as
    // kafkajs's 8 did (worker consumers ask for more: runtime.ts).
    retry: { initialRetryTime: 200, maxRetryTime: 5000, retries: 15 },
    logLevel: logLevel.WARN,
    logCreator: () => (entry: LogEntry) => {
      const { message, timestamp: _t, ...extra } = entry.log;
      kafkaLog[levelOf(entry)]({ namespace: entry.namespace, ...extra }, message);
    },
  });
}
