// A wait with a bound: the work's result, or a rejection once `ms` have passed
// (the work itself goes on; only the caller stops waiting for it).

export async function within<T>(work: Promise<T>, ms: number, message = `timed out after ${ms} ms`): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([work, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
