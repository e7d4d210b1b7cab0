// A Piscina worker whose task function is TypeScript: registers tsx in this
// thread, then re-exports the default export of the module named in
// workerData.entry (Piscina calls it for each task).
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const module = await import(workerData.entry);
export default module.default;
