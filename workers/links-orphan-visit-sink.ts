// Entry point of the links orphan visit sink worker kind (orphan visits → ClickHouse).
import { startWorkerProcess } from './start.ts';

await startWorkerProcess('worker-links-orphan-visit-sink', ['links-orphan-visit-sink']);
