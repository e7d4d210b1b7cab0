// Entry point of the broadcast worker kind (mail.commands → fan-outs, A/B decisions).
import { startWorkerProcess } from './start.ts';

await startWorkerProcess('worker-mail-broadcasts', ['mail-broadcasts']);
