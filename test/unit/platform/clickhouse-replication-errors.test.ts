import { expect, it } from 'vitest';
import { isTransient } from '../../../src/platform/actors/transient.ts';
import { clickHouseCode, replicationOutage } from '../../../src/platform/clickhouse/replication-errors.ts';
import { ServerUnavailable } from '../../../src/platform/clickhouse/server-health.ts';

// ClickHouse 18.16's answers over HTTP, as the client hands them on: a plain Error with the body as its message.
const answer = (code: number, text: string) => new Error(`Code: ${code}, e.displayText() = DB::Exception: ${text}, e.what() = DB::Exception\n`);

it('takes the replication and ZooKeeper failures of ClickHouse 18.16 for outages: retried, never dead-lettered', () => {
  const outages: [number, string, string][] = [
    [242, 'Table is in readonly mode', 'TABLE_IS_READ_ONLY'],
    [225, 'ZooKeeper session has been expired.', 'NO_ZOOKEEPER'],
    [999, 'Coordination::Exception: Connection loss', 'KEEPER_EXCEPTION'],
    [999, 'Coordination::Exception: Session expired', 'KEEPER_EXCEPTION'],
    [244, 'Unexpected ZooKeeper error while adding block 5 with ID \'x\': Operation timeout', 'UNEXPECTED_ZOOKEEPER_ERROR'],
    [285, 'Number of alive replicas (1) is less than requested quorum (2).', 'TOO_FEW_LIVE_REPLICAS'],
    [286, 'Quorum for previous write has not been satisfied yet. Status: version 1', 'UNSATISFIED_QUORUM_FOR_PREVIOUS_WRITE'],
    [289, "Replica doesn't have part 201812_3_3_0 which was successfully written to quorum of other replicas.", 'REPLICA_IS_NOT_IN_QUORUM'],
    [319, 'Unknown status, client must retry. Reason: Code: 159, e.displayText() = DB::Exception: Timeout while waiting for quorum', 'UNKNOWN_STATUS_OF_INSERT'],
    [164, 'Replica is not active right now', 'READONLY'],
    [159, 'Timeout exceeded: elapsed 30.1 seconds, maximum: 30', 'TIMEOUT_EXCEEDED'],
    [252, 'Too many parts (300). Merges are processing significantly slower than inserts.', 'TOO_MANY_PARTS'],
  ];
  for (const [code, text, name] of outages) {
    expect(replicationOutage(answer(code, text)), text).toBe(name);
    expect(isTransient(answer(code, text)), text).toBe(true);
    // Wrapped, as a handler may rethrow it.
    expect(isTransient(new Error('insert failed', { cause: answer(code, text) })), text).toBe(true);
  }
});

it('keeps what is wrong with the rows or the statement a failure of the message, dead-lettered after its attempts', () => {
  const problems: [number, string][] = [
    [27, 'Cannot parse input: expected , before: x'],
    [60, "Table linkmail.scans doesn't exist."],
    [53, 'Type mismatch in IN or VALUES section'],
    [62, 'Syntax error: failed at position 1'],
    // READONLY as the user's readonly setting is a configuration problem, not an outage.
    [164, 'Cannot execute query in readonly mode'],
  ];
  for (const [code, text] of problems) {
    expect(clickHouseCode(answer(code, text))).toBe(code);
    expect(replicationOutage(answer(code, text)), text).toBeUndefined();
    expect(isTransient(answer(code, text)), text).toBe(false);
  }
  // A newer server's error as the client parses it: its code "53" is ClickHouse's TYPE_MISMATCH, not Postgres's class 53 (insufficient resources).
  class ClickHouseError extends Error {
    readonly code: string;
    constructor(message: string, code: string) {
      super(message);
      this.code = code;
    }
  }
  expect(clickHouseCode(new ClickHouseError('Type mismatch', '53'))).toBe(53);
  expect(isTransient(new ClickHouseError('Type mismatch', '53'))).toBe(false);
  expect(isTransient(new ClickHouseError('Too few live replicas', '285'))).toBe(true);
  // Postgres's own class 53 stays an outage.
  expect(isTransient(Object.assign(new Error('sorry, too many clients already'), { code: '53300' }))).toBe(true);
  expect(clickHouseCode(new Error('connect ECONNREFUSED 127.0.0.1:8123'))).toBeUndefined();
  // A server the client left (killed or hung) is an outage; a mail server's "mailbox unavailable" is no ClickHouse's.
  expect(isTransient(new ServerUnavailable('http://127.0.0.1:8123', 'no answer to a ping', false))).toBe(true);
  expect(isTransient(new Error('550 5.1.1 Requested action not taken: mailbox unavailable'))).toBe(false);
});
