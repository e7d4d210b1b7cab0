// ClickHouse client (HTTP), over one server or several (replicas). Queries take SqlFragment only, so
// every value has gone through the literal helper; plain strings cannot be passed by mistake.
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { createClient, type ClickHouseClient, type ClickHouseSettings, type ErrorLogParams, type LogParams, type Logger as ClientLogger, type WarnLogParams } from '@clickhouse/client';
import { listSetting, type Config } from '../config.ts';
import { ServerHealth, ServerUnavailable } from './server-health.ts';
import { clickHouseCode } from './replication-errors.ts';
import type { Logger } from '../logger.ts';
import { ident, join, sql, type SqlFragment } from './literal.ts';
import { externalValuesRequest, type ExternalValues } from './external-values.ts';
import { rowBinary, type Column } from './row-binary.ts';
import { clickhouseInsertDuration, clickhouseInsertRows } from '../metrics/series.ts';

/**
 * A replica that cannot answer a read yet while another may: 289 REPLICA_IS_NOT_IN_QUORUM (a
 * sequentially consistent read, the replica behind a quorum write), 225 NO_ZOOKEEPER, 999 KEEPER_EXCEPTION
 * (its ZooKeeper session lost, as after it was hung), 60 UNKNOWN_TABLE (a table that replica is
 * restarting: SYSTEM RESTART REPLICA detaches and attaches it, failed-quorum-parts.ts; a table that
 * no server has fails on each).
 */
const REPLICA_NOT_READY = new Set([289, 225, 999, 60]);

export type ClickHouseConfig = Pick<Config, 'CLICKHOUSE_URL' | 'CLICKHOUSE_DATABASE' | 'CLICKHOUSE_USER' | 'CLICKHOUSE_PASSWORD'> & Partial<Pick<Config, 'CLICKHOUSE_CA_FILE'>>;

// ClickHouse refuses a statement longer than max_query_size (256 KiB by default): a scan sink's
// duplicate check of 10,000 ids is about 400 KB. Longer statements raise it for themselves; the
// margin leaves room for what the client appends (" FORMAT JSONEachRow").
const DEFAULT_MAX_QUERY_SIZE = 256 * 1024;
const RAISE_FROM = DEFAULT_MAX_QUERY_SIZE - 1024;

function sizeSettings(text: string): { max_query_size?: string } {
  // A string's UTF-8 length is at most three bytes per UTF-16 unit: most statements skip the count.
  if (text.length * 3 <= RAISE_FROM) return {};
  const bytes = Buffer.byteLength(text);
  return bytes <= RAISE_FROM ? {} : { max_query_size: String(2 * bytes + 1024) };
}

export interface QueryOptions {
  signal?: AbortSignal;
  maxExecutionSeconds?: number;
  /** Settings of this query alone (select_sequential_consistency…), besides the client's. */
  settings?: ClickHouseSettings;
}

export interface WriteOptions {
  /** Settings of this statement alone (insert_quorum…), besides the client's. */
  settings?: ClickHouseSettings;
}

export interface InsertOptions extends WriteOptions {
  /**
   * Called as the rows start to leave for the server, and again once the request has taken all but
   * the body's last byte (a body too big to take at once: once its socket has drained it), right
   * before that byte. If it throws, the request is cut there and the insert rejects with its error:
   * the last row is incomplete, so ClickHouse stores none of the rows (of a body under its
   * max_insert_block_size, 1,048,576 rows: a bigger one's first blocks may be stored). What it does
   * not cover is a stop in the few ticks from its last run to the request's end (the chunked
   * terminator) leaving, and on a new connection a small body's wait for the socket to connect.
   * A lock's Lease.assertHeld (idempotent-sink.ts).
   */
  fence?: () => void;
}

/**
 * The ClickHouse servers of CLICKHOUSE_URL (one, or the replicas of a replicated deployment). Reads
 * take turns over the servers that serve and, when one fails to answer (refused, cut, or a missed
 * ping: server-health.ts), go to another: a read is idempotent. A write goes to one server (the first
 * that serves); it is sent to another only when the first surely never received it (connection
 * refused), else it fails with ServerUnavailable and the caller's retry finds a server that serves
 * (the client never sends one write twice itself: on replicated tables block deduplication makes a
 * retried insert harmless, which is the caller's part).
 */
export class ClickHouse {
  readonly servers: readonly ServerHealth[];
  readonly database: string;
  /** Where repairs are told (failed-quorum-parts.ts); none for a start-up check's client. */
  readonly log: Logger | undefined;
  private turn = 0;

  constructor(servers: readonly ServerHealth[], database: string, log?: Logger) {
    if (servers.length === 0) throw new Error('ClickHouse: no server');
    this.servers = servers;
    this.database = database;
    this.log = log;
  }

  /** The first server's client (one server's: start-up checks and tests that speak to it directly). */
  get client(): ClickHouseClient {
    return this.servers[0]!.client;
  }

  /** The servers a request may try, in the order to try them: those that serve first, from `first`. */
  private order(first: number): ServerHealth[] {
    const n = this.servers.length;
    const all = Array.from({ length: n }, (_, i) => this.servers[(first + i) % n]!);
    return [...all.filter((s) => !s.down), ...all.filter((s) => s.down)];
  }

  /** Runs a statement that returns no rows (DDL, ALTER, INSERT … SELECT). */
  async exec(statement: SqlFragment, options: WriteOptions = {}): Promise<void> {
    await this.write((server, signal) => execOn(server.client, statement.text, { ...sizeSettings(statement.text), ...options.settings }, signal));
  }

  /**
   * Runs a SELECT and returns its rows as objects. `signal` stops waiting for the answer (closing
   * the connection); ClickHouse 18.16 goes on with the query regardless, so `maxExecutionSeconds`
   * bounds it there.
   */
  async rows<T>(query: SqlFragment, options: QueryOptions = {}): Promise<T[]> {
    return this.read((server, signal) => this.readOn<T>(server, query, options, signal), options.signal);
  }

  /**
   * Runs a SELECT that names `external`, a list of strings sent beside it as a table of its own
   * (external-values.ts: far cheaper for the server than a long IN list), and returns its rows.
   */
  async rowsWith<T>(query: SqlFragment, external: ExternalValues, options: QueryOptions = {}): Promise<T[]> {
    return this.read(async (server, signal) => {
      const once = async () => {
        // Made anew for each attempt: a request's body is read once.
        const request = externalValuesRequest(external);
        const result = await server.client.exec({
          query: `${query.text} FORMAT JSONEachRow`,
          values: Readable.from([request.body]),
          abort_signal: signal,
          http_headers: { 'content-type': request.contentType },
          clickhouse_settings: {
            ...(options.maxExecutionSeconds === undefined ? {} : { max_execution_time: options.maxExecutionSeconds }),
            ...options.settings,
            ...(request.settings as ClickHouseSettings),
          },
        });
        const chunks: Buffer[] = [];
        for await (const chunk of result.stream) chunks.push(chunk as Buffer);
        return Buffer.concat(chunks).toString('utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as T);
      };
      return onceMoreIfClosedUnderUs(once, signal);
    }, options.signal);
  }

  /**
   * Runs a SELECT on each server that serves, and returns each one's rows: a replica's own state
   * (system.mutations: whether this replica has applied a mutation). A server that does not answer
   * is left out (it serves no reads meanwhile); any other error is thrown.
   */
  async rowsOnEach<T>(query: SqlFragment, options: QueryOptions = {}): Promise<T[][]> {
    return (await this.rowsByServer<T>(query, options)).map((answer) => answer.rows);
  }

  /** rowsOnEach, each answer with the server that gave it (for a statement on that one: execOnServer). */
  async rowsByServer<T>(query: SqlFragment, options: QueryOptions = {}): Promise<{ server: ServerHealth; rows: T[] }[]> {
    const serving = this.servers.filter((s) => !s.down);
    let unavailable: unknown;
    const answers = await Promise.all(
      (serving.length > 0 ? serving : this.servers).map((server) =>
        this.on(server, (s, signal) => this.readOn<T>(s, query, options, signal), options.signal).then(
          (rows) => ({ server, rows }),
          (err: unknown) => {
            if (!(err instanceof ServerUnavailable)) throw err;
            unavailable = err;
            return undefined;
          },
        ),
      ),
    );
    const answered = answers.filter((a) => a !== undefined);
    if (answered.length === 0) throw unavailable;
    return answered;
  }

  /** Runs a statement on this server alone (a replica's own repair: SYSTEM RESTART REPLICA). */
  async execOnServer(server: ServerHealth, statement: SqlFragment): Promise<void> {
    await this.on(server, (s, signal) => execOn(s.client, statement.text, sizeSettings(statement.text), signal));
  }

  /**
   * A SELECT's answer as a stream (an export), in `format` as the statement's FORMAT clause names it.
   * Another server is tried only until one starts answering.
   */
  async stream(query: SqlFragment, options: { signal?: AbortSignal } = {}): Promise<Readable> {
    return this.read(async (server, signal) => {
      // The watch ends once the answer starts; the caller's signal goes on cancelling the stream.
      const abort = options.signal ? AbortSignal.any([signal, options.signal]) : signal;
      return (await server.client.exec({ query: query.text, abort_signal: abort, clickhouse_settings: sizeSettings(query.text) })).stream;
    }, options.signal);
  }

  /**
   * One request to one server: watched when there are others to move to; a single server's requests
   * run as they always did (a ping missed on a busy machine must not cut a slow query with nowhere else to go).
   */
  private async on<T>(server: ServerHealth, work: (server: ServerHealth, signal: AbortSignal) => Promise<T>, outer?: AbortSignal): Promise<T> {
    // @clickhouse/client only listens for an abort to come: a signal aborted already would not stop the request.
    outer?.throwIfAborted();
    if (this.servers.length === 1) return work(server, outer ?? new AbortController().signal);
    return server.watched((signal) => work(server, signal), outer);
  }

  /**
   * Tries the servers in turn until one answers. A server's unavailability moves the read on, and so
   * does a replica that cannot answer it yet: one behind a quorum write that a sequentially consistent
   * read must see (code 289, whose message says to ask another replica), or one without its ZooKeeper
   * session. Any other error is the query's own and is thrown.
   */
  private async read<T>(work: (server: ServerHealth, signal: AbortSignal) => Promise<T>, outer?: AbortSignal): Promise<T> {
    const servers = this.order(this.turn++ % this.servers.length);
    let last: unknown;
    for (const server of servers) {
      try {
        return await this.on(server, work, outer);
      } catch (err) {
        const anotherMayAnswer = err instanceof ServerUnavailable || (this.servers.length > 1 && REPLICA_NOT_READY.has(clickHouseCode(err) ?? 0));
        if (!anotherMayAnswer || outer?.aborted) throw err;
        last = err;
      }
    }
    throw last;
  }

  private async write(work: (server: ServerHealth, signal: AbortSignal) => Promise<void>): Promise<void> {
    const servers = this.order(0);
    let last: unknown;
    for (const server of servers) {
      try {
        return await this.on(server, work);
      } catch (err) {
        if (!(err instanceof ServerUnavailable) || !err.notSent) throw err;
        last = err;
      }
    }
    throw last;
  }

  private async readOn<T>(server: ServerHealth, query: SqlFragment, options: QueryOptions, signal: AbortSignal): Promise<T[]> {
    const once = async () => {
      const result = await server.client.query({
        query: query.text,
        format: 'JSONEachRow',
        abort_signal: signal,
        clickhouse_settings: {
          ...sizeSettings(query.text),
          ...(options.maxExecutionSeconds === undefined ? {} : { max_execution_time: options.maxExecutionSeconds }),
          ...options.settings,
        },
      });
      return result.json<T>();
    };
    return onceMoreIfClosedUnderUs(once, signal);
  }

  /** Inserts rows as JSONEachRow into a table of this database. */
  async insert(table: string, rows: readonly Record<string, unknown>[], options: WriteOptions = {}): Promise<void> {
    await this.timedInsert(table, rows.length, (server, signal) =>
      server.client
        .insert({ table, values: rows as Record<string, unknown>[], format: 'JSONEachRow', abort_signal: signal, ...(options.settings ? { clickhouse_settings: options.settings } : {}) })
        .then(() => undefined),
    );
  }

  /** Inserts events as RowBinary rows of `columns` (row-binary.ts) into a table of this database. */
  async insertRowBinary<E>(table: string, columns: readonly Column<E>[], events: readonly E[], options: InsertOptions = {}): Promise<void> {
    if (events.length === 0) return;
    const statement = sql`INSERT INTO ${ident(table)} (${join(columns.map((c) => ident(c.name)), ', ')}) FORMAT RowBinary`;
    // Encoded once: a value out of its type's range throws before anything is sent.
    const body = rowBinary(columns, events);
    await this.timedInsert(table, events.length, async (server, signal) => {
      // A stream for each attempt: a request's body is read once.
      const values = fencedBody(body, options.fence);
      const result = await server.client.exec({ query: statement.text, values, abort_signal: signal, ...(options.settings ? { clickhouse_settings: options.settings } : {}) });
      await drained(result.stream);
    });
  }

  /** An insert of `rows` rows, written (write) and counted in the insert metrics. */
  private async timedInsert(table: string, rows: number, work: (server: ServerHealth, signal: AbortSignal) => Promise<void>): Promise<void> {
    if (rows === 0) return;
    clickhouseInsertRows.observe({ table }, rows);
    const timer = clickhouseInsertDuration.startTimer({ table });
    try {
      await this.write(work);
      timer({ outcome: 'ok' });
    } catch (err) {
      timer({ outcome: 'failed' });
      throw err;
    }
  }

  /** Whether a server answers (any of them: reads go to those that do). */
  async ping(): Promise<boolean> {
    for (const server of this.order(0)) {
      if (await server.answersPing()) return true;
      server.markDown();
    }
    return false;
  }

  async close(): Promise<void> {
    for (const server of this.servers) server.close();
    await Promise.all(this.servers.map((s) => s.client.close()));
  }
}

async function execOn(client: ClickHouseClient, query: string, settings: ClickHouseSettings, signal: AbortSignal): Promise<void> {
  const result = await client.exec({ query, clickhouse_settings: settings, abort_signal: signal });
  await drained(result.stream);
}

/**
 * The body as a stream that runs `fence` before its first bytes and again before its last byte (see
 * InsertOptions). The last byte is held back because ClickHouse 18.16 takes a request cut after a
 * whole body (all rows, no chunked end) as ended, and stores it; a body cut inside its last row is
 * an error, and stores nothing. With no buffer of its own (highWaterMark 0), the stream is asked for
 * more only once the request took what it gave and, when the socket could not take it at once (more
 * than its 16 KiB), after the socket drained it; a smaller body's two fences run in one pass, before
 * the request writes anything (it corks its socket until the next tick).
 */
function fencedBody(body: Buffer, fence: (() => void) | undefined): Readable {
  const parts = [body.subarray(0, body.length - 1), body.subarray(body.length - 1)];
  let next = 0;
  return new Readable({
    highWaterMark: 0,
    read() {
      if (next < parts.length) {
        try {
          fence?.();
        } catch (err) {
          this.destroy(err as Error);
          return;
        }
      }
      this.push(next < parts.length ? parts[next++] : null);
    },
  });
}

/** Reads a response to its end, so that its socket returns to the pool. */
async function drained(stream: Readable): Promise<void> {
  stream.resume();
  await new Promise<void>((resolve, reject) => {
    stream.once('end', resolve).once('close', resolve).once('error', reject);
  });
}

/**
 * Runs a read, and once more if the server closed a kept-alive socket as the query went out on it: a
 * read is safe to send again, once, on a new socket (the idle TTL makes this rare, a late timer not
 * impossible).
 */
async function onceMoreIfClosedUnderUs<T>(once: () => Promise<T>, signal: AbortSignal): Promise<T> {
  try {
    return await once();
  } catch (err) {
    if (!closedUnderUs(err) || signal.aborted) throw err;
    return once();
  }
}

/** The server closed the connection before answering: a kept-alive socket it had just timed out. */
function closedUnderUs(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return e?.code === 'ECONNRESET' || e?.message === 'socket hang up';
}

/**
 * How long the client keeps an idle socket: ClickHouse before 23.11 closes one after 3 s
 * (keep_alive_timeout), and the client's 2.5 s default left too little room on a busy machine, where
 * its timer fires late and a query went out on a socket the server was closing ("socket hang up").
 */
const IDLE_SOCKET_TTL_MS = 1500;

/** Beyond this a statement is long: the client warns unless progress headers keep its connection busy. */
const LONG_STATEMENT_MS = 60_000;

/** requestTimeoutMs: how long one statement may run (default 30 s; migrations that backfill a table take longer). */
export function createClickHouse(config: ClickHouseConfig, database: string | undefined = config.CLICKHOUSE_DATABASE, requestTimeoutMs = 30_000, log?: Logger): ClickHouse {
  const ca = config.CLICKHOUSE_CA_FILE ? readFileSync(config.CLICKHOUSE_CA_FILE) : undefined;
  const servers = clickhouseUrls(config).map((url) => new ServerHealth(url, clientOf(config, url, ca, database, requestTimeoutMs, log), ca));
  return new ClickHouse(servers, database ?? 'default', log);
}

/** The servers CLICKHOUSE_URL names (comma-separated). */
export const clickhouseUrls = (config: Pick<Config, 'CLICKHOUSE_URL'>): string[] => listSetting(config.CLICKHOUSE_URL);

function clientOf(config: ClickHouseConfig, url: string, ca: Buffer | undefined, database: string | undefined, requestTimeoutMs: number, log?: Logger): ClickHouseClient {
  return createClient({
    ...(log ? { log: { LoggerClass: clientLogOf(log) } } : {}),
    url,
    username: config.CLICKHOUSE_USER,
    password: config.CLICKHOUSE_PASSWORD,
    // An https URL's server is trusted through the system's CAs unless CLICKHOUSE_CA_FILE names its own.
    ...(ca ? { tls: { ca_cert: ca } } : {}),
    ...(database ? { database } : {}),
    request_timeout: requestTimeoutMs,
    keep_alive: { idle_socket_ttl: IDLE_SOCKET_TTL_MS },
    // 18.16 does not know newer settings; send none by default. A statement allowed to run for
    // minutes (a backfilling migration) asks for progress headers, as the client recommends, so that
    // a proxy between us and ClickHouse does not close a connection that carries no bytes for long.
    clickhouse_settings: requestTimeoutMs > LONG_STATEMENT_MS ? { send_progress_in_http_headers: 1, http_headers_progress_interval_ms: '20000' } : {},
  });
}

/**
 * The client's own log, into ours: it prints to the console otherwise. Its errors are warnings
 * here, since every one of them also reaches the caller, which decides (a query we aborted on
 * purpose, after its time, is no error of the service's).
 */
function clientLogOf(log: Logger): new () => ClientLogger {
  const own = log.child({ component: 'clickhouse-client' });
  const write = (level: 'debug' | 'info' | 'warn') => ({ module, message, args, err }: LogParams & { err?: Error }) =>
    own[level]({ module, ...(args ? { args } : {}), ...(err ? { err } : {}) }, message);
  return class {
    trace = write('debug');
    debug = write('debug');
    info = write('info');
    warn: (params: WarnLogParams) => void = write('warn');
    error: (params: ErrorLogParams) => void = write('warn');
  };
}
