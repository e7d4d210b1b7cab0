// Deprecated entry point, kept for one release: run workers/links-scan-sink.ts.
// Starts the same kind (and consumer group), with a deprecation warning.
import '../src/platform/compile-cache.ts'; // first: see there

const { startWorkerProcess } = await import('./start.ts');

await startWorkerProcess('worker-scan-sink', ['scan-sink']);
