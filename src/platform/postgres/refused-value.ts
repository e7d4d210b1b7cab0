// Postgres errors that a value in the request caused, told apart from failures of
// ours: SQLSTATE class 22 (data exception: a malformed date, NUL in text, a value
// out of range) and class 23 (integrity constraint violation). Retrying the same
// value fails again; a batch holding it can still commit without it.

const sqlState = (err: unknown): string | undefined => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
};

/** A data exception (class 22): the value itself is unacceptable. */
export const isDataException = (err: unknown): boolean => sqlState(err)?.startsWith('22') ?? false;

/** An integrity constraint violation (class 23): the value conflicts with the data. */
export const isConstraintViolation = (err: unknown): boolean => sqlState(err)?.startsWith('23') ?? false;

/**
 * The constraint of a foreign key violation (23503): a row the statement referred to was deleted
 * since it was checked (a race the request lost, not a failure of ours); undefined for any other error.
 */
export const violatedForeignKey = (err: unknown): string | undefined =>
  sqlState(err) === '23503' ? String((err as { constraint?: unknown }).constraint ?? '') : undefined;

/** Either: the request's values, not the database or the service, made the statement fail. */
export const isRefusedValue = (err: unknown): boolean => isDataException(err) || isConstraintViolation(err);
