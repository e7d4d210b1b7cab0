// wrk (Debian's 4.1) as the load generator: one run bounded in time (-d) and in
// count (the Lua script stops each thread after its share of requests), its
// figures parsed from wrk's report.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { LoadResult } from './lib.ts';

const run = promisify(execFile);

export interface WrkOptions {
  connections: number;
  seconds: number;
  threads?: number;
  /** Stops after about this many requests (each thread stops after its share). */
  maxRequests: number;
  /** Lua defining `request()` (and anything it needs); the count limit is added around it. */
  script: string;
  /** About this many requests a second in all (wrk 4.1 has no fixed rate: each connection waits between its requests). */
  rate?: number;
}

/** A LoadResult with the CPU wrk itself used (user + system), to take out of the machine's. */
export interface WrkResult extends LoadResult {
  wrkCpuMs: number;
}

const LIMIT = (perThread: number) => `
local __sent = 0
local __request = request
request = function()
  __sent = __sent + 1
  return __request()
end
response = function(status, headers, body)
  if __sent >= ${perThread} then wrk.thread:stop() end
end
`;

const toMs = (value: string, unit: string) => Number(value) * ({ us: 0.001, ms: 1, s: 1000, m: 60_000 } as Record<string, number>)[unit]!;

const PACE = (connections: number, rate: number) => `
delay = function()
  return ${((connections * 1000) / rate).toFixed(3)}
end
`;

/**
 * Lua for a fixed rate whatever the latency: request n goes out at start + n / rate (wrk 4.1's
 * delay() against the wall clock, read through LuaJIT's ffi), as long as the connections suffice.
 * Add it to a script and leave WrkOptions.rate out.
 */
export const fixedRate = (rate: number) => `
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_usec; } timeval;
int gettimeofday(timeval *tv, void *tz);
]]
local __tv = ffi.new("timeval")
local function __now_ms()
  ffi.C.gettimeofday(__tv, nil)
  return tonumber(__tv.tv_sec) * 1000 + tonumber(__tv.tv_usec) / 1000
end
local __start = nil
local __slot = 0
delay = function()
  __start = __start or __now_ms()
  __slot = __slot + 1
  return math.max(0, __start + __slot * 1000 / ${rate} - __now_ms())
end
`;

/** `times` of the shell that ran wrk: its second line is its children's user and system time. */
function childCpuMs(stderr: string): number {
  const lines = stderr.trim().split('\n');
  const m = /(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s/.exec(lines[lines.length - 1] ?? '');
  return m ? (Number(m[1]) * 60 + Number(m[2]) + Number(m[3]) * 60 + Number(m[4])) * 1000 : NaN;
}

export async function wrk(url: string, options: WrkOptions): Promise<WrkResult> {
  const threads = options.threads ?? 1;
  const dir = mkdtempSync(join(tmpdir(), 'wrk-'));
  const file = join(dir, 'script.lua');
  writeFileSync(file, `${options.script}\n${LIMIT(Math.ceil(options.maxRequests / threads))}${options.rate ? PACE(options.connections, options.rate) : ''}`);
  const args = ['-t', String(threads), '-c', String(options.connections), '-d', `${options.seconds}s`, '--latency', '-s', file, url];
  // Through a shell whose `times` reports wrk's CPU once it has exited.
  const { stdout, stderr } = await run('bash', ['-c', 'wrk "$@"; status=$?; times >&2; exit $status', 'bash', ...args], { timeout: (options.seconds + 30) * 1000 });
  const percentile = (p: string) => {
    const m = new RegExp(`^\\s+${p}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, 'm').exec(stdout);
    return m ? toMs(m[1]!, m[2]!) : NaN;
  };
  const max = /Latency\s+\S+\s+\S+\s+([\d.]+)(us|ms|s|m)/.exec(stdout);
  const requests = Number(/(\d+) requests in/.exec(stdout)?.[1] ?? 0);
  const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  return {
    requestsPerSecond: Math.round(Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1] ?? 0)),
    latencyMs: { p50: percentile('50'), p90: percentile('90'), p99: percentile('99'), max: max ? toMs(max[1]!, max[2]!) : NaN },
    requests,
    non2xx3xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1] ?? 0),
    errors: errors ? errors.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
    wrkCpuMs: childCpuMs(stderr),
  };
}
