// One route's answers of one status, counted in plain numbers and added to the HTTP series
// (linkmail_http_requests_total, linkmail_http_request_duration_seconds) when they are read.
//
// prom-client builds a key from the labels on every inc() and observe(): for the redirect, which
// answers tens of thousands of times a second, that was a tenth of its own work (issue 52). A tally
// costs an increment and a bucket search per answer; a scrape adds what it holds, so /metrics shows
// the same series, counts and buckets as if each answer had been counted on its own.
import type { Counter, Histogram } from 'prom-client';

type Labels = Record<string, string | number>;

/** What prom-client keeps per label set of a histogram (lib/histogram.js; the version is pinned). */
interface HistogramEntry {
  labels: Labels;
  bucketValues: Record<number, number>;
  sum: number;
  count: number;
}

export class AnswerTally {
  private readonly counter: Counter<string>;
  private readonly histogram: Histogram<string>;
  private readonly counterLabels: Labels;
  private readonly histogramLabels: Labels;
  private readonly bounds: readonly number[];
  private readonly perBucket: Float64Array;
  private answers = 0;
  private seconds = 0;

  constructor(counter: Counter<string>, histogram: Histogram<string>, method: string, route: string, status: number) {
    this.counter = counter;
    this.histogram = histogram;
    this.counterLabels = { method, route, status };
    this.histogramLabels = { method, route, status_class: `${Math.floor(status / 100)}xx` };
    this.bounds = (histogram as unknown as { upperBounds: number[] }).upperBounds;
    this.perBucket = new Float64Array(this.bounds.length);
  }

  /** Counts one answer that took `seconds`. */
  count(seconds: number): void {
    this.answers++;
    this.seconds += seconds;
    // The first bucket it fits in, as prom-client's own observe() picks it (none past the last: only +Inf).
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (seconds <= bounds[i]!) {
        this.perBucket[i]!++;
        return;
      }
    }
  }

  /** Adds what was counted since the last call to the series (from their collect(), at each read). */
  flush(): void {
    if (this.answers === 0) return;
    this.counter.inc(this.counterLabels, this.answers);
    const entry = this.entry();
    entry.count += this.answers;
    entry.sum += this.seconds;
    this.bounds.forEach((bound, i) => (entry.bucketValues[bound] = (entry.bucketValues[bound] ?? 0) + this.perBucket[i]!));
    this.answers = 0;
    this.seconds = 0;
    this.perBucket.fill(0);
  }

  /** The histogram's entry for these labels, made (zero()) if it has none yet. */
  private entry(): HistogramEntry {
    const find = () => Object.values((this.histogram as unknown as { hashMap: Record<string, HistogramEntry> }).hashMap)
      .find((e) => Object.keys(this.histogramLabels).every((k) => String(e.labels[k]) === String(this.histogramLabels[k])));
    let entry = find();
    if (!entry) {
      this.histogram.zero(this.histogramLabels);
      entry = find()!;
    }
    return entry;
  }
}
