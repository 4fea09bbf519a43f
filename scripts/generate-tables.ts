/**
 * `npm run tables`: derives each machine's table (machines/<name>/<name>.table.ts) from its XState definition,
 * for the lean executor. test/machines/tables.test.ts fails when a checked-in table differs from this output.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { machineTables, renderTable } from './machine-tables.js';

const root = fileURLToPath(new URL('..', import.meta.url));
for (const entry of machineTables) {
  writeFileSync(`${root}${entry.file}`, await renderTable(entry));
  console.log(`wrote ${entry.file}`);
}
