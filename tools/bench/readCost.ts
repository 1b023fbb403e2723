/**
 * Read amplification of the sharded status index: index items read (the Query answers' Count) per
 * pet listed over full walks of one status, by shard count and page size, on dynalite.
 */
import { listPets } from '../../lib/store/petPages.ts';
import { createPet } from '../../lib/store/petWrites.ts';
import { createDocumentClient } from '../../lib/store/dynamo.ts';
import { DEFAULT_STATUS_INDEX_SHARDS, type PetsTable } from '../../lib/store/table.ts';
import { ensurePetsTable, startEmbeddedStore } from '../../local/embeddedStore.ts';
import { table } from './print.ts';

export interface ReadCostRow {
  shards: number;
  limit: number;
  pets: number;
  pages: number;
  itemsRead: number;
  queries: number;
  itemsPerPet: number;
}

const SHARD_COUNTS = [...new Set([1, DEFAULT_STATUS_INDEX_SHARDS, 4, 8])].sort((a, b) => a - b);
const PAGE_SIZES = [1, 20, 100];

/** Counts the index items every Query answers through `documents`. */
function countIndexReads(documents: ReturnType<typeof createDocumentClient>) {
  const reads = { items: 0, queries: 0 };
  documents.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      if (context.commandName === 'QueryCommand') {
        reads.queries++;
        reads.items += (result.output as { Count?: number }).Count ?? 0;
      }
      return result;
    },
    { step: 'initialize', name: 'countIndexReads' },
  );
  return reads;
}

/** Full walks of `pets` available pets, for each page size; throws if a walk lists another number of pets. */
async function walks(
  table: PetsTable,
  pets: number,
  reads: { items: number; queries: number },
): Promise<ReadCostRow[]> {
  const rows: ReadCostRow[] = [];
  for (const limit of PAGE_SIZES) {
    Object.assign(reads, { items: 0, queries: 0 });
    let listed = 0;
    let pages = 0;
    let afterId: number | undefined;
    do {
      const page = await listPets(table, { limit, status: 'available', afterId });
      listed += page.pets.length;
      pages++;
      afterId = page.lastId;
    } while (afterId !== undefined);
    if (listed !== pets)
      throw new Error(`walk of ${table.statusIndexShards} shards, limit ${limit}: ${listed} pets listed of ${pets}`);
    rows.push({
      shards: table.statusIndexShards,
      limit,
      pets: listed,
      pages,
      itemsRead: reads.items,
      queries: reads.queries,
      itemsPerPet: reads.items / listed,
    });
  }
  return rows;
}

export async function measureReadCost(pets: number): Promise<ReadCostRow[]> {
  const store = await startEmbeddedStore();
  const documents = createDocumentClient({ endpoint: store.endpoint });
  try {
    const reads = countIndexReads(documents);
    const rows: ReadCostRow[] = [];
    for (const shards of SHARD_COUNTS) {
      const petsTable: PetsTable = { documents, tableName: `read-cost-${shards}`, statusIndexShards: shards };
      await ensurePetsTable(store.endpoint, petsTable.tableName);
      for (let i = 0; i < pets; i += 25) {
        const batch = Array.from({ length: Math.min(25, pets - i) }, (_, j) => ({
          name: `Pet ${i + j}`,
          categoryId: 1,
          status: 'available' as const,
        }));
        await Promise.all(batch.map((pet) => createPet(petsTable, pet)));
      }
      rows.push(...(await walks(petsTable, pets, reads)));
    }
    return rows;
  } finally {
    documents.destroy();
    await store.close();
  }
}

export function printReadCost(rows: ReadCostRow[]): void {
  table(
    `Status index read cost: full walks of one status, index items read per pet listed (default ${DEFAULT_STATUS_INDEX_SHARDS} shards; target <= 1.5, never above 2.0)`,
    ['shards', 'limit', 'pets', 'pages', 'items read', 'per pet', 'queries/page'],
    rows.map((row) => [
      `${row.shards}${row.shards === DEFAULT_STATUS_INDEX_SHARDS ? ' (default)' : ''}`,
      String(row.limit),
      String(row.pets),
      String(row.pages),
      String(row.itemsRead),
      row.itemsPerPet.toFixed(3),
      (row.queries / row.pages).toFixed(2),
    ]),
  );
}
