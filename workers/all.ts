// One process running every worker kind (the default for a small deployment).
import { workerKinds } from './kinds.ts';
import { startWorkerProcess } from './start.ts';

await startWorkerProcess('workers', Object.keys(workerKinds));
