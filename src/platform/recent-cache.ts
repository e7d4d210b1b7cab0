// A bounded memo of recent answers: the shipper sees the same User-Agents,
// addresses and visitors over and over. When full, the oldest entry goes (a Map
// keeps insertion order), which is all these caches need; no TTL, since the
// answers cached here do not change while the process runs.
export class RecentCache<V> {
  private readonly size: number;
  private readonly entries = new Map<string, V>();

  constructor(size: number) {
    this.size = size;
  }

  get(key: string, compute: (key: string) => V): V {
    const known = this.entries.get(key);
    if (known !== undefined) return known;
    const value = compute(key);
    if (this.entries.size >= this.size) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, value);
    return value;
  }
}
