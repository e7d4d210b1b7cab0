// Kills what a test file's processes left running when the file ends. A child that
// outlives its file (a beforeAll that failed half-way, say) would go on relaying the
// shared outbox tables into that file's topics, and take rows from the files after it.
import { afterAll } from 'vitest';
import { startedChildren } from './processes.ts';

afterAll(async () => {
  const left = [...startedChildren];
  for (const child of left) child.kill('SIGKILL');
  await Promise.all(left.map((child) => new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(undefined) : child.once('exit', resolve)))));
});
