// Reading 18.16's quorum/last_part znode and a part's block range (quorum-markers.ts).
import { expect, it } from 'vitest';
import { maxBlockOf, parseLastParts } from '../../../src/platform/clickhouse/quorum-markers.ts';

it('reads each partition\'s last quorum part, as 18.16.1 writes them, and an older single name', () => {
  expect(parseLastParts('version: 2\nparts count: 2\n202612\t202612_0_0_0\n202601\t202601_1_1_0\n')).toEqual([
    { partition: '202612', part: '202612_0_0_0' },
    { partition: '202601', part: '202601_1_1_0' },
  ]);
  expect(parseLastParts('version: 2\nparts count: 0\n')).toEqual([]);
  expect(parseLastParts('')).toEqual([]);
  expect(parseLastParts('202601_4_4_0')).toEqual([{ partition: '202601', part: '202601_4_4_0' }]);
});

it('takes a part\'s last block from its name, mutated or not', () => {
  expect(maxBlockOf('202601_3_7_1', '202601')).toBe(7);
  expect(maxBlockOf('202601_3_3_0_12', '202601')).toBe(3);
});
