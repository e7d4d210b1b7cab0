// The ingress a test file of Resend's SDK drives: started before the file's tests with the
// SDK pointed at it (RESEND_BASE_URL, which `new Resend(key)` reads), a high request limit
// per second so that the tests' own pace never trips it, and closed after them.
import { afterAll, beforeAll } from 'vitest';
import { startIngress, type TestIngress } from '../ingress.ts';

export interface ResendIngress {
  /** Set before the file's tests run. */
  ingress: TestIngress;
  /** The ingress's base URL, as the SDK uses it. */
  url: string;
}

/**
 * Call at the top of the file, before hooks that need the ingress (registered first, so it is
 * closed last). `env`: more settings, or a function giving them when the ingress starts.
 */
export function useResendIngress(env: Record<string, string> | (() => Record<string, string>) = {}): ResendIngress {
  const shared = {} as ResendIngress;
  beforeAll(async () => {
    shared.ingress = await startIngress({ API_RATE_LIMIT_PER_SEC: '1000', ...(typeof env === 'function' ? env() : env) });
    shared.url = shared.ingress.url;
    process.env.RESEND_BASE_URL = shared.url;
  }, 120_000);
  afterAll(async () => shared.ingress?.close());
  return shared;
}
