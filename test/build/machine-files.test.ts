import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

/**
 * A machine is read in a few files: its setup() implementations (`<m>.logic.ts`), its definition (`<m>.machine.ts`),
 * its types (`<m>.types.ts`) and at most two more, besides its generated table (`<m>.table.ts`).
 */
const MAX_FILES = 5;
const MACHINES = fileURLToPath(new URL('../../machines/', import.meta.url));

const machineDirs = readdirSync(MACHINES, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

describe('machines/', () => {
  it('holds only machine folders, the four machines', () => {
    expect(readdirSync(MACHINES).sort()).toEqual(['origin-health', 'outbox', 'outbox-entry', 'request']);
  });

  it.each(machineDirs)(`%s is written in at most ${MAX_FILES} files besides its table`, (name) => {
    const files = readdirSync(new URL(name + '/', `file://${MACHINES}`)).sort();
    const written = files.filter((file) => file !== `${name}.table.ts`);
    expect(files).toContain(`${name}.table.ts`);
    expect(written).toEqual(
      expect.arrayContaining([`${name}.logic.ts`, `${name}.machine.ts`, `${name}.types.ts`]),
    );
    expect(written.length, written.join(', ')).toBeLessThanOrEqual(MAX_FILES);
    // Every file is the machine's own, named after it.
    expect(written.filter((file) => !file.startsWith(`${name}.`))).toEqual([]);
  });
});
