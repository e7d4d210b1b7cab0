// The V8 heaps of a process's other threads (the scan shipper, the render
// threads). prom-client's nodejs_heap_* series see the main thread only, while
// each thread has a heap, a young generation and a TypeScript loader of its own
// (docs/operations.md, "Memory"). Read from each thread when Prometheus scrapes.
import type { Worker } from 'node:worker_threads';
import { Gauge } from 'prom-client';
import { processRegistry, series } from './series.ts';

/** Threads by name, labelled name-0, name-1, … (a pool has several; a single thread is name-0). */
const sources = new Set<{ name: string; threads: () => readonly Worker[] }>();

/** Reports the heaps of `threads()` under `name` until the returned function is called. */
export function trackThreads(name: string, threads: () => readonly Worker[]): () => void {
  const source = { name, threads };
  sources.add(source);
  return () => sources.delete(source);
}

type HeapField = 'total_heap_size' | 'used_heap_size' | 'external_memory';

function heapGauge(name: string, help: string, field: HeapField): Gauge<'thread'> {
  return series(name, () => new Gauge({
    name,
    help,
    labelNames: ['thread'] as const,
    registers: [processRegistry],
    async collect() {
      this.reset();
      for (const { name: thread, threads } of sources) {
        await Promise.all(threads().map(async (worker, i) => {
          // A thread that exits meanwhile is left out of this scrape.
          const heap = await worker.getHeapStatistics().catch(() => undefined);
          if (heap) this.set({ thread: `${thread}-${i}` }, heap[field]);
        }));
      }
    },
  }));
}

heapGauge('linkmail_thread_heap_size_bytes', 'V8 heap size of a thread other than the main one (the main thread\'s: nodejs_heap_size_total_bytes).', 'total_heap_size');
heapGauge('linkmail_thread_heap_used_bytes', 'V8 heap in use in a thread other than the main one.', 'used_heap_size');
heapGauge('linkmail_thread_external_memory_bytes', 'Memory outside the V8 heap held by a thread\'s objects (Buffers: the scan shipper\'s IP database).', 'external_memory');
