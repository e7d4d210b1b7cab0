// ClickHouse client (HTTP). Queries take SqlFragment only, so every value has
// gone through the literal helper; plain strings cannot be passed by mistake.
import { readFileSync } from 'node:fs';
import { createClient, type ClickHouseClient, type ClickHouseSettings, type ErrorLogParams, type LogParams, type Logger as ClientLogger, type WarnLogParams } from '@clickhouse/client';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { SqlFragment } from './literal.ts';
import { clickhouseInsertDuration, clickhouseInsertRows } from '../metrics/series.ts';

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

export class ClickHouse {
  readonly client: ClickHouseClient;
  readonly database: string;

  constructor(client: ClickHouseClient, database: string) {
    this.client = client;
    this.database = database;
  }

  /** Runs a statement that returns no rows (DDL, ALTER, INSERT … SELECT). */
  async exec(statement: SqlFragment, options: WriteOptions = {}): Promise<void> {
    const result = await this.client.exec({ query: statement.text, clickhouse_settings: { ...sizeSettings(statement.text), ...options.settings } });
    // Drain the response so the socket returns to the pool.
    result.stream.resume();
    await new Promise<void>((resolve, reject) => {
      result.stream.once('end', resolve).once('close', resolve).once('error', reject);
    });
  }

  /**
   * Runs a SELECT and returns its rows as objects. `signal` stops waiting for the answer (closing
   * the connection); ClickHouse 18.16 goes on with the query regardless, so `maxExecutionSeconds`
   * bounds it there.
   */
  async rows<T>(query: SqlFragment, options: QueryOptions = {}): Promise<T[]> {
    try {
      return await this.read<T>(query, options);
    } catch (err) {
      // A kept-alive socket the server closed as the query went out on it: a read is safe to send
      // again, once, on a new socket (the idle TTL below makes this rare, a late timer not impossible).
      if (!closedUnderUs(err) || options.signal?.aborted) throw err;
      return this.read<T>(query, options);
    }
  }

  private async read<T>(query: SqlFragment, options: QueryOptions): Promise<T[]> {
    const result = await this.client.query({
      query: query.text,
      format: 'JSONEachRow',
      abort_signal: options.signal,
      clickhouse_settings: {
        ...sizeSettings(query.text),
        ...(options.maxExecutionSeconds === undefined ? {} : { max_execution_time: options.maxExecutionSeconds }),
        ...options.settings,
      },
    });
    return result.json<T>();
  }

  /** Inserts rows as JSONEachRow into a table of this database. */
  async insert(table: string, rows: readonly Record<string, unknown>[], options: WriteOptions = {}): Promise<void> {
    if (rows.length === 0) return;
    clickhouseInsertRows.observe({ table }, rows.length);
    const timer = clickhouseInsertDuration.startTimer({ table });
    try {
      await this.client.insert({ table, values: rows as Record<string, unknown>[], format: 'JSONEachRow', ...(options.settings ? { clickhouse_settings: options.settings } : {}) });
      timer({ outcome: 'ok' });
    } catch (err) {
      timer({ outcome: 'failed' });
      throw err;
    }
  }

  async ping(): Promise<boolean> {
    const result = await this.client.ping();
    return result.success;
  }

  close(): Promise<void> {
    return this.client.close();
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
  const client = createClient({
    ...(log ? { log: { LoggerClass: clientLogOf(log) } } : {}),
    url: config.CLICKHOUSE_URL,
    username: config.CLICKHOUSE_USER,
    password: config.CLICKHOUSE_PASSWORD,
    // An https URL's server is trusted through the system's CAs unless CLICKHOUSE_CA_FILE names its own.
    ...(config.CLICKHOUSE_CA_FILE ? { tls: { ca_cert: readFileSync(config.CLICKHOUSE_CA_FILE) } } : {}),
    ...(database ? { database } : {}),
    request_timeout: requestTimeoutMs,
    keep_alive: { idle_socket_ttl: IDLE_SOCKET_TTL_MS },
    // 18.16 does not know newer settings; send none by default. A statement allowed to run for
    // minutes (a backfilling migration) asks for progress headers, as the client recommends, so that
    // a proxy between us and ClickHouse does not close a connection that carries no bytes for long.
    clickhouse_settings: requestTimeoutMs > LONG_STATEMENT_MS ? { send_progress_in_http_headers: 1, http_headers_progress_interval_ms: '20000' } : {},
  });
  return new ClickHouse(client, database ?? 'default');
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
