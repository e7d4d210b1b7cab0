// Worker kinds are named by product; the links kinds' names from before stay
// accepted for one release, each standing for the kind of its new name.
import { describe, expect, it } from 'vitest';
import { currentKindName, deprecatedKindNames, workerKinds } from '../../../workers/kinds.ts';

describe('worker kind names', () => {
  it('names every kind by its product', () => {
    for (const name of Object.keys(workerKinds)) expect(name).toMatch(/^(links|mail)-/);
  });

  it('takes a deprecated name as the kind it was renamed to', () => {
    expect(currentKindName('scan-sink')).toBe('links-scan-sink');
    expect(currentKindName('conversion-sink')).toBe('links-conversion-sink');
    expect(currentKindName('webhooks')).toBe('links-webhooks');
    for (const name of Object.values(deprecatedKindNames)) expect(workerKinds[name]).toBeTypeOf('function');
    expect(currentKindName('mail-sender')).toBe('mail-sender');
    expect(currentKindName('links-scan-sink')).toBe('links-scan-sink');
    expect(currentKindName('nope')).toBeUndefined();
    expect(currentKindName('toString')).toBeUndefined();
  });
});
