import { isRecord } from '../policy/is-record.js';
import { fromBase64, toBase64 } from './base64.js';
import type { OutboxEntry } from './outbox-store.js';
import { checkEntry } from './store-input.js';

/*
 * How keyValueStore lays a queue out in a key-value module, under a prefix:
 *
 *   <prefix>:index     {"version":1,"next":7,"entries":[[3,"id-a"],[6,"id-b"]]}   the queue: order and members
 *   <prefix>:entry:3   the entry "id-a" as JSON, a byte body as base64
 *   <prefix>:lease     {"owner":"runner-1","expiresAt":1733360000000}   the outbox's lease (key-value-lease.ts)
 *
 * One key per entry, so an update rewrites one entry, not the queue. The index is the commit point of add and
 * remove (src/stores/key-value-store.ts says why each change is atomic). Slot numbers come from `next`, which
 * only grows: a slot written by an add that never reached the index is `next` still, and the next add reuses it.
 */

/** The layout this failwise writes; a later one upgrades older layouts when it reads them. */
export const LAYOUT_VERSION = 1;

/** The queue's index: slots in the order their entries were added. */
export interface QueueIndex {
  next: number;
  entries: Array<[slot: number, id: string]>;
}

/** @internal */
export const indexKey = (prefix: string): string => `${prefix}:index`;
/** @internal */
export const leaseKey = (prefix: string): string => `${prefix}:lease`;
/** @internal */
export const entryKey = (prefix: string, slot: number): string => `${prefix}:entry:${slot}`;

const isSlot = (value: unknown, next: number): value is number =>
  Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) < next;

/**
 * The index stored as `text` (none yet: an empty queue), or what is wrong with it, in words that quote none of
 * it (an index holds entry ids only, but a value someone else wrote there may hold anything).
 * @internal
 */
export function parseIndex(text: string | undefined): QueueIndex | { problem: string } {
  if (text === undefined) return { next: 0, entries: [] };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: 'is not valid JSON' };
  }
  if (!isRecord(value)) return { problem: 'is not an object' };
  const { version, next, entries } = value;
  if (typeof version === 'number' && version > LAYOUT_VERSION)
    return {
      problem: `has layout version ${version}, written by a newer failwise; this one reads version ${LAYOUT_VERSION}`,
    };
  if (version !== LAYOUT_VERSION) return { problem: `has no known layout version` };
  if (!Number.isSafeInteger(next) || (next as number) < 0) return { problem: 'has no valid next slot' };
  if (!Array.isArray(entries)) return { problem: 'has no list of entries' };
  const slots = new Set<number>();
  const ids = new Set<string>();
  for (const pair of entries as unknown[]) {
    if (!Array.isArray(pair) || pair.length !== 2)
      return { problem: 'lists an entry that is not [slot, id]' };
    const [slot, id] = pair as unknown[];
    if (!isSlot(slot, next as number) || typeof id !== 'string' || id === '')
      return { problem: 'lists an entry that is not [slot, id]' };
    if (slots.has(slot) || ids.has(id)) return { problem: 'lists a slot or an id twice' };
    slots.add(slot);
    ids.add(id);
  }
  return { next: next as number, entries: entries as Array<[number, string]> };
}

/** @internal */
export const formatIndex = (index: QueueIndex): string =>
  JSON.stringify({ version: LAYOUT_VERSION, next: index.next, entries: index.entries });

/**
 * `entry` as stored: JSON, with a byte body as `bodyBase64` (JSON has no bytes).
 * @internal
 */
export function encodeEntry(entry: OutboxEntry): string {
  const { body, ...request } = entry.request;
  const stored =
    body instanceof Uint8Array ? { ...request, bodyBase64: toBase64(body) } : { ...request, body };
  return JSON.stringify({ ...entry, request: stored });
}

/**
 * The entry stored as `text` under the index's `id`, or why it cannot be used: not JSON, a field failwise would
 * refuse to store (the same check as every store's add), or another entry's id.
 * @internal
 */
export function decodeEntry(text: string, id: string): { entry: OutboxEntry } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: 'is not valid JSON' };
  }
  if (isRecord(value) && isRecord(value.request) && 'bodyBase64' in value.request) {
    const { bodyBase64, ...request } = value.request;
    const body = typeof bodyBase64 === 'string' ? fromBase64(bodyBase64) : undefined;
    if (body === undefined) return { problem: 'has a byte body that is not base64' };
    value = { ...value, request: { ...request, body } };
  }
  try {
    checkEntry('stored', value);
  } catch (error) {
    // `stored: entry.attempts: expected an integer >= 0 (got -1)` without the `stored: `.
    return { problem: `is not an entry (${(error as Error).message.slice('stored: '.length)})` };
  }
  if (value.id !== id) return { problem: 'holds another entry than the index names' };
  return { entry: value };
}

/** The lease as stored: who holds it, until when (the holder's clock time). */
export interface StoredLease {
  owner: string;
  expiresAt: number;
}

/**
 * The lease stored as `text`, or `undefined` when there is none or it is not one a store wrote: an unreadable
 * lease is free, as an expired one is (the lease guards sends, not data, and the next holder writes it again).
 * @internal
 */
export function parseLease(text: string | undefined): StoredLease | undefined {
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (!isRecord(value)) return undefined;
    const { owner, expiresAt } = value;
    return typeof owner === 'string' && owner !== '' && Number.isFinite(expiresAt)
      ? { owner, expiresAt: expiresAt as number }
      : undefined;
  } catch {
    return undefined;
  }
}

/** @internal */
export const formatLease = ({ owner, expiresAt }: StoredLease): string =>
  JSON.stringify({ owner, expiresAt });

/** Whether `a` and `b` are the same claim: one owner, one expiry. @internal */
export const sameLease = (a: StoredLease | undefined, b: StoredLease | undefined): boolean =>
  a !== undefined && b !== undefined && a.owner === b.owner && a.expiresAt === b.expiresAt;
