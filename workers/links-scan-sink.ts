// Entry point of the links scan sink worker kind (scans → ClickHouse).
import { startWorkerProcess } from './start.ts';

await startWorkerProcess('worker-links-scan-sink', ['links-scan-sink']);
