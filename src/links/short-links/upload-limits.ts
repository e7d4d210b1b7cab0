// Bounds on a streamed request body: its size, the pause between two chunks, and the whole
// upload's time. The body is the raw request stream (bodyLimit does not apply), so these are
// what stops a client that sends forever, or too slowly, from keeping an import open.
import type { Readable } from 'node:stream';

export interface UploadLimits {
  maxBytes: number;
  /** The longest pause between two chunks of the body. */
  stallMs: number;
  /** The longest the whole upload may take. */
  deadlineMs: number;
}

export type UploadBreach = 'too_large' | 'stalled' | 'too_slow';

/**
 * Watches `body` until `stop()` is called, and calls `breach` once when a limit is passed. The body
 * is not destroyed (that would close the connection before the answer is sent): the caller stops
 * reading it. The reader calls `progress()` as it works through what has arrived: a pause is the
 * time the reader waited on the client, not the time the client waited on a busy reader.
 */
export function watchUpload(body: Readable, limits: UploadLimits, breach: (why: UploadBreach) => void): { progress: () => void; stop: () => void } {
  let bytes = 0;
  let done = false;
  const end = (why?: UploadBreach) => {
    if (done) return;
    done = true;
    clearTimeout(stall);
    clearTimeout(deadline);
    body.off('data', onData);
    if (why) breach(why);
  };
  const onData = (chunk: Buffer | string) => {
    bytes += chunk.length;
    if (bytes > limits.maxBytes) return end('too_large');
    stall.refresh();
  };
  const stall = setTimeout(() => end('stalled'), limits.stallMs);
  const deadline = setTimeout(() => end('too_slow'), limits.deadlineMs);
  body.on('data', onData);
  return { progress: () => void (done || stall.refresh()), stop: () => end() };
}
