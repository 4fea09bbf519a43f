import { describe, expect, it } from 'vitest';
import { commitEntryReply, entryRecordOf, sendEntryReply } from '../../machines/outbox/outbox.replies.js';
import type { OutboxEntry } from '../../src/stores/outbox-store.js';

const stored: OutboxEntry = {
  id: 'e1',
  createdAt: 5,
  request: {
    method: 'POST',
    path: '/v1/pay?token=SECRET',
    headers: { 'x-api-key': 'SECRET' },
    body: '{"card":"SECRET"}',
  },
  idempotencyKey: 'SECRET-KEY',
  orderKey: 'cart',
  attempts: 2,
  nextAttemptAt: 40,
  failures: [
    { class: 'connect', requestSent: 'no', origin: 'primary', message: 'connect ECONNREFUSED' },
    {
      class: 'rate-limited',
      requestSent: 'yes',
      origin: 'primary',
      status: 429,
      retryAfterMs: 1_000,
      message: 'HTTP 429',
    },
  ],
  status: 'pending',
};

describe('entryRecordOf', () => {
  it('keeps the counters, times and last failure of a stored entry, and nothing of its request or key', () => {
    expect(entryRecordOf(stored)).toEqual({
      id: 'e1',
      createdAt: 5,
      orderKey: 'cart',
      attempts: 2,
      nextAttemptAt: 40,
      status: 'pending',
      failures: [
        {
          class: 'rate-limited',
          requestSent: 'yes',
          origin: 'primary',
          status: 429,
          retryAfterMs: 1_000,
          message: 'HTTP 429',
        },
      ],
    });
    expect(JSON.stringify(entryRecordOf(stored))).not.toContain('SECRET');
  });

  it('copies: neither the record nor its failure is the store object', () => {
    const record = entryRecordOf(stored);
    expect(record).not.toBe(stored);
    expect(record.failures?.[0]).not.toBe(stored.failures[1]);
  });

  it('drops fields a store keeps on a failure beyond the Failure type, and leaves absent ones out', () => {
    const failure = { ...stored.failures[0]!, rawHeaders: 'x-api-key: SECRET' };
    const dead = { ...stored, orderKey: undefined, status: 'dead' as const, deadReason: 'expired' };
    expect(entryRecordOf({ ...dead, failures: [failure] })).toEqual({
      id: 'e1',
      createdAt: 5,
      attempts: 2,
      nextAttemptAt: 40,
      status: 'dead',
      deadReason: 'expired',
      failures: [{ class: 'connect', requestSent: 'no', origin: 'primary', message: 'connect ECONNREFUSED' }],
    });
    expect(entryRecordOf({ ...stored, failures: [] })).not.toHaveProperty('failures');
  });
});

describe('outbox replies', () => {
  const chatty = Object.assign(new RangeError('update failed for /v1/pay?token=SECRET'), {
    detail: 'SECRET',
  });

  it('reports a failed store write by the error name only', () => {
    const reply = commitEntryReply(
      { id: 'e1', commit: { op: 'claim', attempts: 3 } },
      { ok: false, error: chatty },
    );
    expect(reply).toEqual({ type: 'commit.failed', id: 'e1', error: { name: 'RangeError' } });
  });

  it('reports a send that threw by the error name only', () => {
    const reply = sendEntryReply({ id: 'e1', attempt: 3 }, { ok: false, error: chatty });
    expect(JSON.stringify(reply)).not.toContain('SECRET');
    expect(reply).toMatchObject({
      type: 'send.ended',
      result: { failure: { message: 'sendEntry threw RangeError instead of reporting a result' } },
    });
  });
});
