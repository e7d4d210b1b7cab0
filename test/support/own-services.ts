// For services a test starts of its own (a Kafka cluster, a secured stack): free ports beside the
// run's stack and the ports test processes listen on (processes.ts childPort: 20000 and up), and
// whether the process that owns a folder of them still runs. No vitest here: benches use them too.
import { createServer } from 'node:net';

/** The first of `count` consecutive free ports, in a block of `count` aligned within `from`-`to`. */
export async function freePortBlock(from: number, to: number, count: number): Promise<number> {
  const blocks = Math.floor((to - from + 1) / count);
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = from + count * Math.floor(Math.random() * blocks);
    const free = await Promise.all(Array.from({ length: count }, (_, i) => portFree(base + i)));
    if (free.every(Boolean)) return base;
  }
  throw new Error(`no ${count} free ports in ${from}-${to}`);
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Whether a process (the owner of a folder of services) is still running. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
