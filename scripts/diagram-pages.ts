import { originHealthMachine } from '../machines/origin-health/origin-health.machine.js';
import { outboxMachine } from '../machines/outbox/outbox.machine.js';
import { requestMachine } from '../machines/request/request.machine.js';
import { machinePage } from './machine-diagram.js';

/** Every generated page, by path: `npm run diagrams` writes them and a test compares them. */
export function diagramPages(): Record<string, string> {
  return {
    'docs/machines/request.md': machinePage('requestMachine', requestMachine),
    'docs/machines/origin-health.md': machinePage('originHealthMachine', originHealthMachine),
    'docs/machines/outbox.md': machinePage('outboxMachine', outboxMachine),
  };
}
