// The README and docs/ show code that users copy and links they follow; the code must be the code
// the tests run, and every link to a file of the repository must lead to one.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const DOCUMENTS = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

describe('README and docs', () => {
  it('show the webhook verification snippet exactly as examples/verify-webhook-signature.mjs', () => {
    expect(read('docs/links-api.md')).toContain('```js\n' + read('examples/verify-webhook-signature.mjs') + '```');
  });

  it('link only to files that exist (the specs beside the repository included)', () => {
    const broken: string[] = [];
    for (const doc of DOCUMENTS) {
      for (const [, target] of read(doc).matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue; // http(s), mailto
        if (!existsSync(join(ROOT, dirname(doc), target!))) broken.push(`${doc} → ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('promise nothing for a "next issue": what is built is described, what is not says so plainly', () => {
    const promises = DOCUMENTS.flatMap((doc) => read(doc).split('\n').map((line, i) => [`${doc}:${i + 1}`, line] as const).filter(([, line]) => /next issues?\b/i.test(line)));
    expect(promises).toEqual([]);
  });

  it('keep the README short enough to read in ten minutes', () => {
    expect(read('README.md').split('\n').length).toBeLessThanOrEqual(300);
  });
});
