/** Formatting shared by the drill's HTML report and its timeline: escaping, times, colour keys. */
import type { TimelineServed } from './drill-report.js';

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text safe both between tags and inside a double-quoted attribute. Absent values print as nothing. */
export function escapeHtml(value: string | number | boolean | undefined | null): string {
  if (value === undefined || value === null) return '';
  return String(value).replace(/[&<>"']/g, (char) => ESCAPES[char] ?? char);
}
export const esc = escapeHtml;

/** `850 ms`, `5.125 s`, `10 min 2.5 s`: exact, for tooltips and tables. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (Math.abs(ms) < 1000) return `${round(ms, 1)} ms`;
  if (Math.abs(ms) < 60_000) return `${round(ms / 1000, 3)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = round((ms - minutes * 60_000) / 1000, 3);
  return seconds === 0 ? `${minutes} min` : `${minutes} min ${seconds} s`;
}

export const round = (value: number, digits: number): number => {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
};

export const plural = (count: number, noun: string): string => `${count} ${noun}${count === 1 ? '' : 's'}`;

/** Attempt results with a colour of their own; any other becomes `other`. */
const RESULT_CLASSES = [
  'ok',
  'response-timeout',
  'connect-timeout',
  'connection-lost',
  'dns',
  'connect',
  'offline',
  'tls',
  'unauthorized',
  'rate-limited',
  'unavailable',
  'server-error',
  'client-error',
  'unexpected',
  'cancelled',
  'unfinished',
] as const;
const HEALTH_STATES = ['healthy', 'suspect', 'failedOver', 'probingFailback'] as const;

/** The result's failure class (`unavailable 503` -> `unavailable`), as a CSS-safe key. */
export function resultKey(result: string): string {
  const head = String(result).split(' ')[0] ?? '';
  return (RESULT_CLASSES as readonly string[]).includes(head) ? head : 'other';
}

export function healthKey(state: string): string {
  return (HEALTH_STATES as readonly string[]).includes(state) ? state : 'other';
}

/** What a request's reply looked like to the origin, for its marker's colour. */
export function servedKey(served: TimelineServed): 'probe' | 'applied' | 'ok' | 'hang' | 'drop' | 'error' {
  if (served.probe) return 'probe';
  if (served.applied) return 'applied';
  const reply = String(served.reply);
  if (/^[23]\d\d/.test(reply)) return 'ok';
  if (reply.startsWith('hang')) return 'hang';
  if (reply.startsWith('drop')) return 'drop';
  return 'error';
}
