// Runs one worker kind by name: `tsx workers/run.ts <kind>` (scale kinds independently).
import { workerKinds } from './kinds.ts';
import { startWorkerProcess } from './start.ts';

const name = process.argv[2];
const make = name ? workerKinds[name] : undefined;
if (!make) {
  console.error(`usage: tsx workers/run.ts <kind>; kinds: ${Object.keys(workerKinds).join(', ') || '(none yet)'}`);
  process.exit(2);
}
await startWorkerProcess(`worker-${name}`, [await make()]);
