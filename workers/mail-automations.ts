// Entry point of the automation worker kind (mail.automation-steps → run steps; the runs' timer).
import { startWorkerProcess } from './start.ts';

await startWorkerProcess('worker-mail-automations', ['mail-automations']);
