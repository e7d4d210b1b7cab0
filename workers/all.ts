// One process running every worker kind (the default for a small deployment).
import '../src/platform/compile-cache.ts'; // first: see there

const { workerKinds } = await import('./kinds.ts');
const { startWorkerProcess } = await import('./start.ts');

await startWorkerProcess('workers', Object.keys(workerKinds));
