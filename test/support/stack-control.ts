// Stops and restarts services of the local stack for fault tests (the stack started by infra/local/stack.sh).
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { eventually, testConfig } from './env.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

function pidOf(service: string): number {
  const file = `${ROOT}.stack/run/${service}.pid`;
  if (!existsSync(file)) throw new Error(`${file} not found: fault tests need the stack started by infra/local/stack.sh from this checkout`);
  return Number(readFileSync(file, 'utf8').trim());
}

/** The stack's Kafka processes: the single broker, or every node with STACK_KAFKA_NODES=3 (as stack.sh names them). */
const kafkaServices = (): string[] => (process.env.STACK_KAFKA_NODES === '3' ? ['kafka-1', 'kafka-2', 'kafka-3'] : ['kafka']);

/** Stops Kafka (SIGTERM; every node of a cluster at once) and waits for the processes to end. */
export async function stopKafka(): Promise<void> {
  const pids = kafkaServices().map(pidOf);
  for (const pid of pids) process.kill(pid, 'SIGTERM');
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  for (let i = 0; i < 600; i++) {
    if (!pids.some(alive)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('kafka did not stop within 60 s');
}

/**
 * Starts whatever of the stack is down (idempotent) and waits for health, then until a restarted
 * broker leads every partition again: it answers as healthy while it still loads the run's thousands
 * of partitions, and a send then refused by some of them is sent again whole by kafkajs (duplicates
 * in the next file), and a consumer group may find no coordinator yet.
 */
export async function startStack(): Promise<void> {
  await run('bash', [`${ROOT}infra/local/stack.sh`, 'start'], { cwd: ROOT, timeout: 180_000 });
  await kafkaLeadsEveryPartition(120_000);
}

async function kafkaLeadsEveryPartition(timeoutMs: number): Promise<void> {
  const admin = new Kafka({ brokers: testConfig().KAFKA_BROKERS.split(','), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    await eventually(async () => {
      try {
        const { topics } = await admin.fetchTopicMetadata({ topics: await admin.listTopics() });
        return topics.length > 0 && topics.every((t) => t.partitions.every((p) => p.leader >= 0 && p.partitionErrorCode === 0));
      } catch {
        // Metadata not served yet: ask again.
        return false;
      }
    }, timeoutMs, 250);
  } finally {
    await admin.disconnect();
  }
}
