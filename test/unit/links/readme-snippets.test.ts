// The README shows code that users copy; it must be the code the tests run.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');

describe('README snippets', () => {
  it('shows the webhook verification snippet exactly as examples/verify-webhook-signature.mjs', () => {
    expect(read('README.md')).toContain('```js\n' + read('examples/verify-webhook-signature.mjs') + '```');
  });
});
