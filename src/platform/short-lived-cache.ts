// A bounded memo of answers that may be a moment old: each entry is kept for
// `ttlMs`, loads of one key in flight are shared, a failed load is not kept, and
// when full the oldest entry goes. For lookups on every request (an API key, an
// organization's verified domains) whose changes may take a moment to reach every
// process; the process that makes a change forgets the entry at once (delete).
export class ShortLivedCache<V> {
  private readonly ttlMs: number;
  private readonly size: number;
  private readonly entries = new Map<string, { value: Promise<V>; until: number }>();

  constructor(
    ttlMs: number,
    size: number,
  ) {
    this.ttlMs = ttlMs;
    this.size = size;
  }

  get(key: string, load: () => Promise<V>): Promise<V> {
    if (this.ttlMs <= 0) return load();
    const now = Date.now();
    const known = this.entries.get(key);
    if (known && known.until > now) return known.value;
    const value = load();
    value.catch(() => {
      if (this.entries.get(key)?.value === value) this.entries.delete(key);
    });
    this.entries.delete(key);
    if (this.entries.size >= this.size) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, until: now + this.ttlMs });
    return value;
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}
