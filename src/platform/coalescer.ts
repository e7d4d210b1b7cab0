// Gathers concurrent calls into one batch: the first call runs a batch of its own
// at once; calls made while a batch runs wait and go together in the next one.
// So a lone call pays no added latency (no timer), and under load one round trip
// and one commit serve many callers. Each caller gets its own item's result or
// error. A batch that throws fails each of its callers with that error, unless
// the error is one an item's own value can cause (`itemsAlone`): then the items
// run again one by one, so one caller's bad value fails that caller only and the
// others, whoever sent them, still go through.

/** What one batch gives back: a settled result per item, in order. */
export type BatchRunner<I, R> = (items: I[]) => Promise<PromiseSettledResult<R>[]>;

interface Waiting<I, R> {
  item: I;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

export class Coalescer<I, R> {
  private readonly run: BatchRunner<I, R>;
  /** The most items one batch takes; the rest wait for the next. */
  private readonly maxBatch: number;
  /** Whether a batch that failed with this error should run again item by item (it must have changed nothing). */
  private readonly itemsAlone: (err: unknown) => boolean;
  private waiting: Waiting<I, R>[] = [];
  private running = false;

  constructor(
    run: BatchRunner<I, R>,
    maxBatch = 100,
    itemsAlone: (err: unknown) => boolean = () => false,
  ) {
    this.run = run;
    this.maxBatch = maxBatch;
    this.itemsAlone = itemsAlone;
  }

  call(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.maxBatch);
      try {
        settle(batch, await this.run(batch.map((w) => w.item)));
      } catch (err) {
        if (batch.length > 1 && this.itemsAlone(err)) await this.oneByOne(batch);
        else for (const w of batch) w.reject(err);
      }
    }
    this.running = false;
  }

  private async oneByOne(batch: Waiting<I, R>[]): Promise<void> {
    for (const w of batch) {
      try {
        settle([w], await this.run([w.item]));
      } catch (err) {
        w.reject(err);
      }
    }
  }
}

function settle<I, R>(batch: Waiting<I, R>[], results: PromiseSettledResult<R>[]): void {
  batch.forEach((w, i) => {
    const result = results[i]!;
    if (result.status === 'fulfilled') w.resolve(result.value);
    else w.reject(result.reason);
  });
}
