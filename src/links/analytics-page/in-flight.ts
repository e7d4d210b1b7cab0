// One read for identical page loads at once: a page shared widely is opened by many
// people in the same seconds, and each load of the same range would run the same
// ClickHouse queries. While a read is running, a load that needs the same answer
// waits for it instead of starting another. Nothing is kept once it has answered
// (so nothing is stale): this bounds the work by the distinct ranges being read.
export class InFlight<T> {
  private readonly running = new Map<string, Promise<T>>();

  /** The answer of the read of `key` running now, else of a new one made by `read`. */
  get(key: string, read: () => Promise<T>): Promise<T> {
    const running = this.running.get(key);
    if (running) return running;
    const started = read().finally(() => this.running.delete(key));
    this.running.set(key, started);
    return started;
  }

  /** Reads running now. */
  get size(): number {
    return this.running.size;
  }
}
