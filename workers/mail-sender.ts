// Entry point of the mail sender worker kind (mail.messages → SMTP relay).
import { startWorkerProcess } from './start.ts';

await startWorkerProcess('worker-mail-sender', ['mail-sender']);
