// Every worker kind of the product. `workers/all.ts` runs them all in one
// process; `workers/run.ts <kind>` runs one. Features add their kind here.
import type { WorkerKind } from '../src/platform/actors/worker-kind.ts';

export const workerKinds: Record<string, () => Promise<WorkerKind>> = {};
