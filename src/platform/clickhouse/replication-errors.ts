// ClickHouse's errors that are an outage of replication or of ZooKeeper, not a
// problem with what was sent: a replica that lost its ZooKeeper session is
// read-only until it has a new one, a quorum insert needs enough live
// replicas, and an insert whose quorum was not confirmed has an unknown
// outcome. Each clears once the servers are back, and the sink's insert is
// safe to repeat (its existence check, then block deduplication), so these are
// retried until they end, never dead-lettered.
//
// 18.16 answers over HTTP with "Code: 242, e.displayText() = DB::Exception: …":
// the client cannot parse that (it expects a newer server's "(TYPE)" suffix),
// so the code is read from the message here. Numbers from 18.16's
// dbms/src/Common/ErrorCodes.cpp.
const OUTAGE_CODES: ReadonlyMap<number, string> = new Map([
  [159, 'TIMEOUT_EXCEEDED'],
  [209, 'SOCKET_TIMEOUT'],
  [210, 'NETWORK_ERROR'],
  [225, 'NO_ZOOKEEPER'],
  [242, 'TABLE_IS_READ_ONLY'],
  [244, 'UNEXPECTED_ZOOKEEPER_ERROR'],
  // Too many parts (a replica catching up merges less): the server's own back-pressure.
  [252, 'TOO_MANY_PARTS'],
  [254, 'NO_ACTIVE_REPLICAS'],
  [285, 'TOO_FEW_LIVE_REPLICAS'],
  [286, 'UNSATISFIED_QUORUM_FOR_PREVIOUS_WRITE'],
  [289, 'REPLICA_IS_NOT_IN_QUORUM'],
  [319, 'UNKNOWN_STATUS_OF_INSERT'],
  [999, 'KEEPER_EXCEPTION'],
]);

/** 164 READONLY is also a user's readonly setting (a configuration error): an outage only as a replica not yet active. */
const READONLY = 164;
const INACTIVE_REPLICA = /replica is not active/i;

const CODE = /^Code: (\d+)[,.]/;

/** ClickHouse's error code of an error it answered, if it is one. */
export function clickHouseCode(error: unknown): number | undefined {
  const e = error as { message?: unknown; code?: unknown } | null;
  if (typeof e?.message !== 'string') return undefined;
  const match = CODE.exec(e.message);
  if (match) return Number(match[1]);
  // A newer server's answer, which the client parses (ClickHouseError: the code as a string).
  return e.constructor?.name === 'ClickHouseError' && typeof e.code === 'string' && /^\d+$/.test(e.code) ? Number(e.code) : undefined;
}

/** The name of the replication outage this error is, or undefined if it is none. */
export function replicationOutage(error: unknown): string | undefined {
  const code = clickHouseCode(error);
  if (code === undefined) return undefined;
  if (code === READONLY) return INACTIVE_REPLICA.test(String((error as Error).message)) ? 'READONLY' : undefined;
  return OUTAGE_CODES.get(code);
}
