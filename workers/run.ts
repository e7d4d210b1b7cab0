// Runs the named worker kinds: `node workers/run.ts links-scan-sink [kind…]` (to scale kinds independently).
import '../src/platform/compile-cache.ts'; // first: see there

const { startWorkerProcess } = await import('./start.ts');

await startWorkerProcess(`worker-${process.argv.slice(2).join('+') || 'none'}`, process.argv.slice(2));
