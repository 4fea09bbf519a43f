import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { outboxEntryMachine } from '../../machines/outbox-entry/outbox-entry.machine.js';
import { toMermaid } from '../../scripts/machine-diagram.js';

// docs/durable.md shows an entry's lifecycle diagram inline: it must be the machine's, as `npm run diagrams` draws it.
describe('docs/durable.md', () => {
  it('shows the outbox entry machine’s diagram as generated from its definition', () => {
    const page = readFileSync(new URL('../../docs/durable.md', import.meta.url), 'utf8');
    expect(page).toContain(['```mermaid', toMermaid(outboxEntryMachine), '```'].join('\n'));
  });
});
