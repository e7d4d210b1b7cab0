// The render pool: QR codes and barcodes are drawn in worker threads
// (Piscina), never on the event loop that answers redirects. The queue is
// bounded: when every thread is busy and the queue is full, the API answers
// 503 with Retry-After instead of queueing without bound.
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { ApiError } from '../../platform/http/errors.ts';
import { trackThreads } from '../../platform/metrics/thread-heaps.ts';
import type { RenderRefusal, RenderResult, RenderTask } from './render-task.ts';

export interface RenderPoolOptions {
  /** Threads; default: the machine's cores. */
  threads?: number;
  /** Tasks waiting beyond the running ones before 503; default 4 per thread. */
  maxQueue?: number;
}

export class RenderPool {
  private readonly piscina: Piscina;
  private readonly untrack: () => void;

  constructor(options: RenderPoolOptions = {}) {
    const threads = options.threads ?? Math.max(1, availableParallelism());
    this.piscina = new Piscina({
      filename: new URL('./render-worker.ts', import.meta.url).href,
      // No thread until the first render: an idle thread holds 25-50 MB (its V8 heap, the TypeScript
      // loader, the QR and barcode code), and most processes render rarely or never. The first render
      // after start or after idleTimeout waits for a thread to start (docs/operations.md, "Memory").
      minThreads: 0,
      maxThreads: threads,
      maxQueue: options.maxQueue ?? threads * 4,
      idleTimeout: 60_000,
    });
    this.untrack = trackThreads('render', () => this.piscina.threads);
  }

  get threads(): number {
    return this.piscina.threads.length;
  }

  async render(task: RenderTask): Promise<RenderResult | RenderRefusal> {
    try {
      return (await this.piscina.run(task)) as RenderResult | RenderRefusal;
    } catch (err) {
      if (/queue is at limit/i.test((err as Error).message)) {
        throw new ApiError(503, 'render_busy', 'The image renderer is busy; retry in a moment.', undefined, { 'retry-after': '1' });
      }
      throw err;
    }
  }

  close(): Promise<void> {
    this.untrack();
    return this.piscina.destroy();
  }
}
