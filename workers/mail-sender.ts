// Entry point of the mail sender worker kind (mail.messages → SMTP relay).
import '../src/platform/compile-cache.ts'; // first: see there

const { startWorkerProcess } = await import('./start.ts');

await startWorkerProcess('worker-mail-sender', ['mail-sender']);
