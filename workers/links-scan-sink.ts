// Entry point of the links scan sink worker kind (scans → ClickHouse).
import '../src/platform/compile-cache.ts'; // first: see there

const { startWorkerProcess } = await import('./start.ts');

await startWorkerProcess('worker-links-scan-sink', ['links-scan-sink']);
