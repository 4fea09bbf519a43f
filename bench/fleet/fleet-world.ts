import type { TransportRequest, TransportResult } from '../../src/transports/transport.js';

/**
 * The simulated origins of one fleet run and their scripted faults, on the fleet's clock (ms from 0). The
 * primary goes through every phase; the backup is always healthy. Each origin keeps its own record of applied
 * writes by idempotency key (a backup in another region does not see the primary's keys at once), and counts
 * every request it sees, per second.
 */
export interface Phase {
  name: 'normal' | 'outage' | 'recovery' | 'errors' | 'overload';
  from: number;
  to: number;
}

/** The script: 20 s normal, a 60 s full outage, 60 s of recovery, 30 s at 30 % errors, 30 s overloaded, 30 s normal. */
export const PHASES: readonly Phase[] = [
  { name: 'normal', from: 0, to: 20_000 },
  { name: 'outage', from: 20_000, to: 80_000 },
  { name: 'recovery', from: 80_000, to: 140_000 },
  { name: 'errors', from: 140_000, to: 170_000 },
  { name: 'overload', from: 170_000, to: 200_000 },
  { name: 'normal', from: 200_000, to: 230_000 },
];
export const DURATION_MS = PHASES.at(-1)!.to;
export const OUTAGE = PHASES[1]!;
export const RECOVERY = PHASES[2]!;
/** In the errors phase, this share of the primary's answers fail. */
export const ERROR_RATE = 0.3;
/** Overloaded, the primary serves at most this share of the fleet's mean load a second; the rest get 503. */
export const OVERLOAD_CAPACITY = 0.5;
/** The Retry-After (seconds) of an overloaded primary's 503. */
export const OVERLOAD_RETRY_AFTER_S = 2;

export const PRIMARY_URL = 'https://primary.fleet.test';
export const BACKUP_URL = 'https://backup.fleet.test';
/** The header the fleet puts on each logical request (not a failwise header): which operation an attempt is. */
export const OP_HEADER = 'x-fleet-op';

export const phaseAt = (t: number): Phase['name'] =>
  PHASES.find((phase) => t >= phase.from && t < phase.to)?.name ?? 'normal';

/** What one origin saw, per second of the run. */
export interface OriginLoad {
  /** Requests (attempts and probes) that arrived, per second. */
  perSecond: number[];
  probes: number;
}

/** One run's origins. `answer` decides each arriving request's fate at the moment it arrives. */
export class FleetWorld {
  readonly load: Record<'primary' | 'backup', OriginLoad>;
  /** Attempts per logical operation (probes excluded), indexed by operation number. */
  readonly attemptsByOp: Uint16Array;
  /** How many times each operation's write was applied, over both origins. */
  readonly appliedByOp: Uint8Array;
  private readonly keys = { primary: new Set<string>(), backup: new Set<string>() };
  private overloadSecond = -1;
  private overloadServed = 0;

  constructor(
    ops: number,
    private readonly random: () => number,
    /** Requests a second the primary serves while overloaded. */
    private readonly overloadCapacity: number,
  ) {
    const seconds = Math.ceil(DURATION_MS / 1000) + 60;
    this.load = {
      primary: { perSecond: new Array<number>(seconds).fill(0), probes: 0 },
      backup: { perSecond: new Array<number>(seconds).fill(0), probes: 0 },
    };
    this.attemptsByOp = new Uint16Array(ops);
    this.appliedByOp = new Uint8Array(ops);
  }

  /** The origin's answer to `request` arriving at `now`, and the latency after which the client gets it. */
  answer(request: TransportRequest, now: number): { result: TransportResult; latencyMs: number } {
    const origin = request.url.startsWith(PRIMARY_URL) ? 'primary' : 'backup';
    const load = this.load[origin];
    const second = Math.floor(now / 1000);
    load.perSecond[second] = (load.perSecond[second] ?? 0) + 1;
    const opText = request.headers[OP_HEADER];
    const op = opText === undefined ? -1 : Number(opText);
    if (op >= 0) this.attemptsByOp[op] = (this.attemptsByOp[op] ?? 0) + 1;
    else load.probes += 1;
    const latencyMs = 20 + Math.floor(this.random() * 40);
    const phase = origin === 'primary' ? phaseAt(now) : 'normal';

    if (phase === 'outage')
      return {
        result: { kind: 'error', phase: 'connect', requestSent: 'no', message: 'refused' },
        latencyMs: 1,
      };
    if (phase === 'overload') {
      if (second !== this.overloadSecond) {
        this.overloadSecond = second;
        this.overloadServed = 0;
      }
      if (++this.overloadServed > this.overloadCapacity)
        return { result: status(503, String(OVERLOAD_RETRY_AFTER_S)), latencyMs };
    }
    if (phase === 'errors' && this.random() < ERROR_RATE) {
      // Half answer 503 (nothing applied); half apply the write and lose the connection before answering.
      if (this.random() < 0.5) return { result: status(503), latencyMs };
      this.apply(origin, request, op);
      return {
        result: { kind: 'error', phase: 'connection-lost', requestSent: 'unknown', message: 'reset' },
        latencyMs,
      };
    }
    this.apply(origin, request, op);
    return { result: status(request.method === 'POST' ? 201 : 200), latencyMs };
  }

  /** A write is applied unless this origin has applied its idempotency key already. */
  private apply(origin: 'primary' | 'backup', request: TransportRequest, op: number): void {
    if (request.method !== 'POST' || op < 0) return;
    const key = request.headers['idempotency-key'];
    if (key !== undefined) {
      if (this.keys[origin].has(key)) return;
      this.keys[origin].add(key);
    }
    this.appliedByOp[op] = (this.appliedByOp[op] ?? 0) + 1;
  }
}

/**
 * One answer per status, shared by every call: a Response costs microseconds to make, a run has hundreds of
 * thousands of answers, and these have no body to read and headers nobody changes.
 */
const answers = new Map<string, TransportResult>();
function status(code: number, retryAfter?: string): TransportResult {
  const key = `${code} ${retryAfter ?? ''}`;
  let result = answers.get(key);
  if (result === undefined) {
    const headers: Record<string, string> = retryAfter === undefined ? {} : { 'retry-after': retryAfter };
    result = { kind: 'response', response: new Response(null, { status: code, headers }) };
    answers.set(key, result);
  }
  return result;
}
