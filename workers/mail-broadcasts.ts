// Entry point of the broadcast worker kind (mail.commands → fan-outs, A/B decisions).
import '../src/platform/compile-cache.ts'; // first: see there

const { startWorkerProcess } = await import('./start.ts');

await startWorkerProcess('worker-mail-broadcasts', ['mail-broadcasts']);
