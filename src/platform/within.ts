// A wait with a bound: the work's result, or a rejection once `ms` have passed
// (the work itself goes on; only the caller stops waiting for it). A message given as a
// function is made when the time runs out, so it can tell how far the work got.

export async function within<T>(work: Promise<T>, ms: number, message: string | (() => string) = `timed out after ${ms} ms`): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = () => new Error(typeof message === 'function' ? message() : message);
  try {
    return await Promise.race([work, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(late()), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
