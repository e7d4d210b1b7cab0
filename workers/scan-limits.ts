// Entry point of the scan-limit actor kind (scans → link exhaustion in links.changelog).
import { startWorkerProcess } from './start.ts';

await startWorkerProcess('worker-scan-limits', ['scan-limits']);
