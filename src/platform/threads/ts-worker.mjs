// Starts a worker thread whose code is TypeScript: registers tsx in this
// thread (execArgv loaders do not reach worker threads everywhere, e.g. under
// the test runner), then imports the entry named in workerData.entry.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
