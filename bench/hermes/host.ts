/**
 * What React Native adds to Hermes and a script on the bare VM must bring itself (the VM gives ECMAScript,
 * `print` and timers): `console`, `queueMicrotask`, `performance.now`, `AbortController`, `URL`, `URLSearchParams`, and
 * whatwg-fetch's `Headers`, `Request` and `Response`, the ones React Native installs. Bundled on its own and run
 * before bench/hermes/script.ts, so that these exist before any module that reads them at import.
 *
 * `AbortController`, `URL` and `URLSearchParams` here are small stand-ins written for this script, so that every peer
 * that aborts pays for the same cheap one; bench/hermes/host-react-native*.ts put React Native's own in their place.
 */
import 'whatwg-fetch';

declare const print: (...values: unknown[]) => void;

type Listener = ((event: { type: string }) => void) | { handleEvent(event: { type: string }): void };

class HostAbortSignal {
  aborted = false;
  reason: unknown = undefined;
  onabort: ((event: { type: string }) => void) | null = null;
  private listeners: Listener[] = [];

  addEventListener(type: string, listener: Listener, options?: { once?: boolean }): void {
    if (type !== 'abort' || this.listeners.includes(listener)) return;
    if (options?.once) {
      const once: Listener = (event) => {
        this.removeEventListener(type, once);
        if (typeof listener === 'function') listener(event);
        else listener.handleEvent(event);
      };
      this.listeners.push(once);
      (once as { original?: Listener }).original = listener;
      return;
    }
    this.listeners.push(listener);
  }

  removeEventListener(type: string, listener: Listener): void {
    if (type !== 'abort') return;
    const at = this.listeners.findIndex(
      (candidate) => candidate === listener || (candidate as { original?: Listener }).original === listener,
    );
    if (at >= 0) this.listeners.splice(at, 1);
  }

  throwIfAborted(): void {
    if (this.aborted) throw this.reason;
  }

  dispatch(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const event = { type: 'abort' };
    this.onabort?.(event);
    for (const listener of [...this.listeners]) {
      if (typeof listener === 'function') listener(event);
      else listener.handleEvent(event);
    }
  }
}

class HostAbortController {
  readonly signal = new HostAbortSignal();

  abort(reason?: unknown): void {
    const error = new Error('This operation was aborted');
    error.name = 'AbortError';
    this.signal.dispatch(reason === undefined ? error : reason);
  }
}

const URL_PARTS =
  /^([a-z][a-z0-9+.-]*:)\/\/(?:([^:@/]*)(?::([^@/]*))?@)?([^:/?#]+)(?::(\d+))?([^?#]*)(\?[^#]*)?(#.*)?$/i;

/** The parts of an absolute URL; no normalising, as React Native's own `URL` does none. */
class HostURL {
  readonly protocol: string;
  readonly username: string;
  readonly password: string;
  readonly hostname: string;
  readonly port: string;
  readonly pathname: string;
  readonly search: string;
  readonly hash: string;

  constructor(url: string) {
    const parts = URL_PARTS.exec(String(url));
    if (!parts) throw new TypeError(`Invalid URL: ${String(url)}`);
    this.protocol = parts[1]!;
    this.username = parts[2] ?? '';
    this.password = parts[3] ?? '';
    this.hostname = parts[4]!;
    this.port = parts[5] ?? '';
    this.pathname = parts[6] || '/';
    this.search = parts[7] ?? '';
    this.hash = parts[8] ?? '';
  }

  get host(): string {
    return this.port ? `${this.hostname}:${this.port}` : this.hostname;
  }

  get origin(): string {
    return `${this.protocol}//${this.host}`;
  }

  get href(): string {
    return `${this.origin}${this.pathname}${this.search}${this.hash}`;
  }

  toString(): string {
    return this.href;
  }
}

/** Enough of `URLSearchParams` for `instanceof` and `toString()`, which is all failwise asks of one. */
class HostURLSearchParams {
  private readonly pairs: [string, string][] = [];

  append(name: string, value: string): void {
    this.pairs.push([name, value]);
  }

  toString(): string {
    return this.pairs.map((pair) => pair.map(encodeURIComponent).join('=')).join('&');
  }
}

const show = (...values: unknown[]) =>
  print(...values.map((value) => (value instanceof Error ? (value.stack ?? String(value)) : value)));

/** Installs what the VM lacks, keeping whatever is there already (a host that brings React Native's own). */
export function installHostGlobals(): void {
  const host = globalThis as Record<string, unknown>;
  host.console ??= { log: show, info: show, warn: show, error: show, debug: show };
  host.queueMicrotask ??= (task: () => void) => void Promise.resolve().then(task);
  host.performance ??= { now: () => Date.now() };
  host.AbortController ??= HostAbortController;
  host.AbortSignal ??= HostAbortSignal;
  host.URL ??= HostURL;
  host.URLSearchParams ??= HostURLSearchParams;
}

installHostGlobals();
