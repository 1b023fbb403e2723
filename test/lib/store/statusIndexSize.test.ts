/**
 * What the status index's projection costs per pet, by DynamoDB's item size rules (attribute names
 * plus values: a string's UTF-8 bytes, a number 1 byte per two significant digits plus 1), measured
 * on items as createPet stores them: the figures docs/performance.md ("The status index") states and
 * decides on. `ALL` projects the whole item; `INCLUDE` would project the keys and what the listing
 * answers (the Pet's fields), leaving out the write token and the creator.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../infra/bundle/bundling.ts';
import type { NewPet } from '../../../lib/domain/schemas.ts';
import { toPet } from '../../../lib/store/petReads.ts';
import { createPet } from '../../../lib/store/petWrites.ts';
import { petsTable } from '../../../lib/store/table.ts';
import { useFreshService } from '../../support/store.ts';

const fresh = useFreshService();

/** One attribute's size: its name's UTF-8 bytes and its value's. */
function attributeSize(name: string, value: unknown): number {
  if (typeof value === 'number') {
    const significant = String(Math.abs(value)).replace(/^0+|\.|0+$/g, '').length;
    return Buffer.byteLength(name) + Math.ceil(significant / 2) + 1;
  }
  return Buffer.byteLength(name) + Buffer.byteLength(String(value));
}
const itemSize = (item: Record<string, unknown>): number =>
  Object.entries(item).reduce((sum, [name, value]) => sum + attributeSize(name, value), 0);

/** The attributes an INCLUDE projection of the listing's fields would hold: the table's and the index's keys, and the Pet. */
const LISTED = [petsTable.partitionKey.name, petsTable.statusIndex.partitionKey.name, 'name', 'categoryId', 'status'];
const included = (item: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(item).filter(([name]) => LISTED.includes(name)));
/** A write unit per KB of the item written (the index's item for the index). */
const writeUnits = (bytes: number) => Math.ceil(bytes / 1024);

/** A time-ordered id of today's 14 digits, fixed so that the sizes are. */
const ID = 58_799_897_262_163;
const PETS: Record<string, NewPet> = {
  typical: { name: 'Rex', categoryId: 7, status: 'available' },
  largest: { name: '\u{1F415}'.repeat(256), categoryId: Number.MAX_SAFE_INTEGER, status: 'available' },
};

async function storedItem(pet: NewPet, id = ID): Promise<Record<string, unknown>> {
  const { pets } = fresh.service;
  await createPet(pets, pet, { newId: () => id, createdBy: 'a1b2c3d4e5f6' });
  const get = new GetCommand({ TableName: pets.tableName, Key: { id } });
  return (await pets.documents.send(get)).Item!;
}

/** The rows of docs/performance.md's size table, by pet. */
function documentedRows(): Record<string, string[]> {
  const doc = readFileSync(join(PROJECT_ROOT, 'docs', 'performance.md'), 'utf8');
  const section = doc.slice(doc.indexOf('\n## The status index\n'), doc.indexOf('\n## Load'));
  const rows = section
    .split('\n')
    .filter((line) => /^\| (typical|largest) /.test(line))
    .map((line) =>
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
  return Object.fromEntries(rows.map(([pet, ...cells]) => [pet!.split(' ')[0]!, cells]));
}

describe('the status index projection, by item size', () => {
  it.each(Object.keys(PETS))("states the %s pet's sizes in docs/performance.md as measured", async (which) => {
    const item = await storedItem(PETS[which]!);
    const all = itemSize(item);
    const include = itemSize(included(item));
    const bytes = (n: number) => `${n.toLocaleString('en-US')} B`;
    expect(documentedRows()[which]).toEqual([
      bytes(all),
      bytes(include),
      `${bytes(all + 100)} / ${bytes(include + 100)}`,
      `${writeUnits(all)} / ${writeUnits(include)}`,
    ]);
  });

  it('would cost the listing nothing: it answers only the Pet fields an INCLUDE projection keeps', async () => {
    for (const [n, pet] of Object.values(PETS).entries()) {
      const item = await storedItem(pet, ID + n);
      expect(toPet(included(item))).toEqual(toPet(item));
      expect(
        Object.keys(item)
          .filter((name) => !LISTED.includes(name))
          .sort(),
      ).toEqual([petsTable.creatorAttribute, petsTable.writeTokenAttribute].sort());
    }
  });
});
