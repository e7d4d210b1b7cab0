// Entry point of the scan sink worker kind (scans → ClickHouse).
import { startWorkerProcess } from './start.ts';

await startWorkerProcess('worker-scan-sink', ['scan-sink']);
