import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { diagramPages } from './diagram-pages.js';

// Writes docs/machines.md and docs/machines/*.md from the machine definitions (`npm run diagrams`).
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
for (const [file, content] of Object.entries(await diagramPages())) {
  const path = join(root, file);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
  console.log(`wrote ${file}`);
}
