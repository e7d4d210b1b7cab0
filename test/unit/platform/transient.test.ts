import { expect, it } from 'vitest';
import { isTransient } from '../../../src/platform/actors/transient.ts';

it('takes a Postgres session ended under a stopped process for an outage, not for a bad message', () => {
  const pgError = (code: string, message: string) => Object.assign(new Error(message), { code });
  expect(isTransient(pgError('25P03', 'terminating connection due to idle-in-transaction timeout'))).toBe(true);
  expect(isTransient(pgError('57P05', 'terminating connection due to idle-session timeout'))).toBe(true);
  // The next query on that connection (pg's own error, no code).
  expect(isTransient(new Error('Client has encountered a connection error and is not queryable'))).toBe(true);
  expect(isTransient(pgError('23505', 'duplicate key value violates unique constraint "x"'))).toBe(false);
  expect(isTransient(pgError('57P04', 'database "x" does not exist'))).toBe(false);
});
