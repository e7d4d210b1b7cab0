// The TLS and SASL options of every kafkajs client the processes and their tools make, from the
// KAFKA_SSL* and KAFKA_SASL* settings. Absent settings (a test's cluster of its own) mean neither.
import { readFileSync } from 'node:fs';
import type { KafkaConfig, SASLOptions } from 'kafkajs';
import type { Config } from '../config.ts';

export type KafkaSecuritySettings = Pick<Config,
  'KAFKA_SSL' | 'KAFKA_SSL_CA_FILE' | 'KAFKA_SSL_CERT_FILE' | 'KAFKA_SSL_KEY_FILE' | 'KAFKA_SASL_MECHANISM' | 'KAFKA_SASL_USERNAME' | 'KAFKA_SASL_PASSWORD'>;

export function kafkaSecurity(c: Partial<KafkaSecuritySettings>): Pick<KafkaConfig, 'ssl' | 'sasl'> {
  const options: Pick<KafkaConfig, 'ssl' | 'sasl'> = {};
  if (c.KAFKA_SSL === 'on') {
    // Without a CA of its own the system's are trusted (a managed cluster's public certificates).
    options.ssl = {
      ...(c.KAFKA_SSL_CA_FILE ? { ca: readFileSync(c.KAFKA_SSL_CA_FILE, 'utf8') } : {}),
      ...(c.KAFKA_SSL_CERT_FILE && c.KAFKA_SSL_KEY_FILE ? { cert: readFileSync(c.KAFKA_SSL_CERT_FILE, 'utf8'), key: readFileSync(c.KAFKA_SSL_KEY_FILE, 'utf8') } : {}),
    };
  }
  if (c.KAFKA_SASL_MECHANISM) {
    options.sasl = { mechanism: c.KAFKA_SASL_MECHANISM, username: c.KAFKA_SASL_USERNAME ?? '', password: c.KAFKA_SASL_PASSWORD ?? '' } as SASLOptions;
  }
  return options;
}

/** How the client authenticates, for messages (never the password). */
export function kafkaIdentity(c: Partial<KafkaSecuritySettings>): string {
  const tls = c.KAFKA_SSL === 'on' ? `TLS${c.KAFKA_SSL_CERT_FILE ? ' with a client certificate' : ''}` : 'plaintext';
  return c.KAFKA_SASL_MECHANISM ? `SASL ${c.KAFKA_SASL_MECHANISM.toUpperCase()} as user '${c.KAFKA_SASL_USERNAME}' over ${tls}` : tls;
}
