// One process running every worker kind (the default for a small deployment).
import { workerKinds } from './kinds.ts';
import { startWorkerProcess } from './start.ts';

const kinds = await Promise.all(Object.values(workerKinds).map((make) => make()));
await startWorkerProcess('workers', kinds);
