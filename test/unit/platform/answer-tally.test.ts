// The redirect's answers are counted apart from prom-client (answer-tally.ts) and added to the HTTP
// series when they are read: /metrics must show what counting each answer with prom-client shows.
import { describe, expect, it } from 'vitest';
import { Counter, Histogram, Registry } from 'prom-client';
import { AnswerTally } from '../../../src/platform/metrics/answer-tally.ts';

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** A registry with the two HTTP series; `tallies` join them when read, as series.ts does. */
function seriesWith(tallies: AnswerTally[] = []) {
  const registry = new Registry();
  const collect = () => tallies.forEach((t) => t.flush());
  const counter = new Counter({ name: 'requests_total', help: 'h', labelNames: ['method', 'route', 'status'], registers: [registry], collect });
  const histogram = new Histogram({ name: 'duration_seconds', help: 'h', labelNames: ['method', 'route', 'status_class'], buckets: BUCKETS, registers: [registry], collect });
  return { registry, counter, histogram };
}

// Every bucket, exactly on bounds, past the last one, and zero.
const durations = [0, 0.0001, 0.0005, 0.0007, 0.001, 0.003, 0.02, 0.02, 0.3, 1, 4, 10, 10.5, 30];

describe('answer tallies', () => {
  it('show the same series, counts, sums and buckets as prom-client counting each answer, across reads', async () => {
    const expected = seriesWith();
    const tallies: AnswerTally[] = [];
    const actual = seriesWith(tallies);
    const tally = new AnswerTally(actual.counter, actual.histogram, 'GET', '/:shortId', 302);
    tallies.push(tally);
    // Another route counted the ordinary way in both: its series stay its own.
    for (const s of [expected, actual]) s.counter.inc({ method: 'GET', route: '/other', status: 200 });
    for (const round of [durations, durations.slice(3), []]) {
      for (const seconds of round) {
        expected.counter.inc({ method: 'GET', route: '/:shortId', status: 302 });
        expected.histogram.observe({ method: 'GET', route: '/:shortId', status_class: '3xx' }, seconds);
        tally.count(seconds);
      }
      expect(await actual.registry.metrics()).toBe(await expected.registry.metrics());
    }
  });

  it('add to the series prom-client already holds for the same labels (the same route answered through Fastify)', async () => {
    const expected = seriesWith();
    const tallies: AnswerTally[] = [];
    const actual = seriesWith(tallies);
    const tally = new AnswerTally(actual.counter, actual.histogram, 'GET', '/:shortId', 302);
    tallies.push(tally);
    for (const s of [expected, actual]) {
      s.counter.inc({ method: 'GET', route: '/:shortId', status: 302 });
      s.histogram.observe({ method: 'GET', route: '/:shortId', status_class: '3xx' }, 0.002);
    }
    for (const seconds of durations) {
      expected.counter.inc({ method: 'GET', route: '/:shortId', status: 302 });
      expected.histogram.observe({ method: 'GET', route: '/:shortId', status_class: '3xx' }, seconds);
      tally.count(seconds);
    }
    expect(await actual.registry.metrics()).toBe(await expected.registry.metrics());
  });
});
