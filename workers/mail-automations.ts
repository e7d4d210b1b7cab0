// Entry point of the automation worker kind (mail.automation-steps → run steps; the runs' timer).
import '../src/platform/compile-cache.ts'; // first: see there

const { startWorkerProcess } = await import('./start.ts');

await startWorkerProcess('worker-mail-automations', ['mail-automations']);
