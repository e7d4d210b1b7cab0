// Starts a worker thread running a TypeScript module (see ts-worker.mjs).
import { Worker } from 'node:worker_threads';

export function startTsWorker(entry: URL, data: Record<string, unknown>): Worker {
  return new Worker(new URL('./ts-worker.mjs', import.meta.url), { workerData: { ...data, entry: entry.href } });
}
