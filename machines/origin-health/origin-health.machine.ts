import { setup } from 'xstate';
import { xstateActions } from '../../src/engine/machine-logic.js';
import { originHealthActors } from './origin-health.actors.js';
import { originHealthLogic } from './origin-health.logic.js';
import type { HealthCriterion } from '../../src/policy/health-evidence.js';
import type {
  HealthChanged,
  HealthState,
  OriginHealthContext,
  OriginHealthEvent,
  OriginHealthInput,
} from './origin-health.types.js';

/** The actions of every change of state: stamp its start and announce it. */
function change(from: HealthState, to: HealthState, criterion: HealthCriterion) {
  return ['markChanged', { type: 'announceChange', params: { from, to, criterion } }] as const;
}

/**
 * A failure of the primary trips a failover criterion: traffic leaves it. `failOver` records the criterion
 * (`trippedBy`) before the evidence behind it is cleared, so the announcement can name it.
 */
function failOverFrom(from: 'healthy' | 'suspect') {
  return {
    guard: 'tripsFailover',
    target: '#originHealth.failedOver',
    actions: ['failOver', 'markChanged', { type: 'announceFailover', params: { from } }],
  } as const;
}

/** An outcome that changes no state: it is only counted. */
const recordOutcome = { actions: ['recordPrimaryOutcome', 'recordBackupOutcome'] } as const;

/** A failed probe: back to `failedOver`, for longer. */
const probeFailed = {
  target: '#originHealth.failedOver',
  actions: ['lengthenFailover', ...change('probingFailback', 'failedOver', 'probe-failed')],
} as const;

/**
 * The health of one origin set (a primary and its backups), fed with attempt outcomes, probe results,
 * connectivity hints and time: `healthy` -> `suspect` -> `failedOver` -> `probingFailback` -> `healthy`, with
 * hysteresis. `selectOrigin` (src/policy/select-origin.ts) reads its snapshot to name each attempt's origin. It never
 * finishes: its runner stops it. See docs/failover.md and the generated docs/machines/origin-health.md.
 */
export const originHealthMachine = setup({
  types: {
    context: {} as OriginHealthContext,
    input: {} as OriginHealthInput,
    events: {} as OriginHealthEvent,
    emitted: {} as HealthChanged,
  },
  actors: originHealthActors,
  guards: originHealthLogic.guards,
  delays: originHealthLogic.delays,
  actions: xstateActions(originHealthLogic.actions),
}).createMachine({
  id: 'originHealth',
  context: originHealthLogic.context,
  initial: 'onPrimary',
  on: {
    'connectivity.changed': { actions: 'recordConnectivity' },
  },
  states: {
    onPrimary: {
      description: 'Traffic goes to the primary; its outcomes are weighed against the health criteria.',
      initial: 'healthy',
      states: {
        healthy: {
          description: 'The primary takes all traffic; its outcomes are counted.',
          on: {
            'attempt.failed': [
              failOverFrom('healthy'),
              {
                guard: 'makesSuspect',
                target: 'suspect',
                actions: ['recordPrimaryOutcome', ...change('healthy', 'suspect', 'consecutive-failures')],
              },
              recordOutcome,
            ],
            'attempt.succeeded': recordOutcome,
          },
        },
        suspect: {
          description:
            'The primary failed suspectAfter times in a row; traffic stays on it while evidence is gathered.',
          on: {
            'attempt.failed': [failOverFrom('suspect'), recordOutcome],
            'attempt.succeeded': [
              {
                guard: 'recovers',
                target: 'healthy',
                actions: ['recordPrimaryOutcome', ...change('suspect', 'healthy', 'successes')],
              },
              recordOutcome,
            ],
          },
        },
      },
    },
    failedOver: {
      description: 'Traffic goes to the backups; the primary gets nothing for at least failedOverTime.',
      entry: 'startTimer',
      on: {
        'attempt.failed': { actions: 'recordBackupOutcome' },
        'attempt.succeeded': { actions: 'recordBackupOutcome' },
      },
      after: {
        failedOverTime: {
          target: 'probingFailback',
          actions: [
            { type: 'passTime', params: originHealthLogic.params.failedOverTime },
            ...change('failedOver', 'probingFailback', 'min-failed-over-elapsed'),
          ],
        },
      },
    },
    probingFailback: {
      description:
        'Traffic stays on the backups while the primary is probed; probeSuccesses in a row fail back.',
      entry: 'startProbing',
      initial: 'probing',
      on: {
        'attempt.failed': { actions: 'recordBackupOutcome' },
        'attempt.succeeded': { actions: 'recordBackupOutcome' },
      },
      states: {
        probing: {
          description: 'One probe of the primary in flight, bounded by probeTimeout.',
          entry: 'startTimer',
          invoke: {
            id: 'probe',
            src: 'probe',
            input: originHealthLogic.inputs.probe,
            onDone: [
              {
                guard: 'probeInconclusive',
                target: 'resting',
                actions: { type: 'recordProbe', params: originHealthLogic.params.inconclusiveProbe },
              },
              {
                guard: 'probesSucceeded',
                target: '#originHealth.onPrimary.healthy',
                actions: [
                  { type: 'recordProbe', params: originHealthLogic.params.probeOutput },
                  'failBack',
                  ...change('probingFailback', 'healthy', 'probes-succeeded'),
                ],
              },
              {
                guard: 'probeSucceeded',
                target: 'resting',
                actions: { type: 'recordProbe', params: originHealthLogic.params.probeOutput },
              },
              {
                ...probeFailed,
                actions: [
                  { type: 'recordProbe', params: originHealthLogic.params.probeOutput },
                  ...probeFailed.actions,
                ],
              },
            ],
            onError: [{ guard: 'isDeviceOffline', target: 'resting' }, probeFailed],
          },
          after: {
            probeTimeout: {
              ...probeFailed,
              actions: [
                { type: 'passTime', params: originHealthLogic.params.probeTimeout },
                ...probeFailed.actions,
              ],
            },
          },
        },
        resting: {
          description: 'Waits probeInterval before the next probe.',
          entry: 'startTimer',
          after: {
            probeInterval: {
              target: 'probing',
              actions: { type: 'passTime', params: originHealthLogic.params.probeInterval },
            },
          },
        },
      },
    },
  },
});
export { healthStateOf } from '../../src/policy/health-state.js';
