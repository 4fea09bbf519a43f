/**
 * What failwise repeats of an error thrown by code it calls (a transport, a store, an app's hook): its name. Its
 * message, cause and fields may quote a URL, a header value or a stored row, so they never reach a machine, an
 * event or a log (rule 9).
 */
export function errorNameOf(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}
