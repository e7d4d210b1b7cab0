// src/platform/next-tick-shape.ts: after full garbage collections, Node's nextTick defines its queue
// entries' keys through a megamorphic inline cache (V8's runtime, every call), unless one entry is
// kept alive. Read from V8 itself (%DebugPrint of nextTick's feedback) in a child process of this
// Node, both ways. Should the first case stop failing after a Node upgrade, the module is no longer
// needed: this test then says so.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'next-tick-shape-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const module = fileURLToPath(new URL('../../../src/platform/next-tick-shape.ts', import.meta.url));

/** The states of nextTick's DefineKeyedOwnPropertyInLiteral slots after eight rounds of ticks and a full collection. */
function literalSlotStates(keep: boolean): string[] {
  const probe = join(dir, `probe-${keep ? 'keep' : 'none'}.mjs`);
  writeFileSync(probe, `
${keep ? `const { keptTickObject } = await import(${JSON.stringify(module)});
if (!keptTickObject()) throw new Error('no tick object kept');` : ''}
for (let round = 0; round < 8; round++) {
  for (let i = 0; i < 200; i++) await new Promise((resolve) => process.nextTick(resolve));
  gc({ type: 'major', execution: 'sync' });
}
%DebugPrint(process.nextTick);
`);
  const printed = execFileSync(process.execPath, ['--allow-natives-syntax', '--expose-gc', probe], { encoding: 'utf8' });
  return [...printed.matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((m) => m[1]!);
}

it('keeps nextTick\'s entry literal monomorphic across full collections (without it, this Node makes it megamorphic)', () => {
  const without = literalSlotStates(false);
  expect(without.length, 'nextTick has no computed keys any more: next-tick-shape.ts can go').toBeGreaterThan(0);
  expect(without, 'this Node keeps nextTick fast by itself: next-tick-shape.ts can go').toContain('MEGAMORPHIC');
  const kept = literalSlotStates(true);
  expect(kept.length).toBe(without.length);
  expect(kept.every((state) => state === 'MONOMORPHIC'), kept.join(', ')).toBe(true);
});
