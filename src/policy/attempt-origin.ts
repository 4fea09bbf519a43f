/** What the origin set says about where an attempt may go (the client's health monitor answers it). */
export interface OriginChooser {
  /** The origin of the next attempt, passing over `avoid` when another may take it; none when none may. */
  choose(write: boolean, avoid?: readonly string[]): string | undefined;
  /** The origin `choose` would name if every origin under a server hold were out of the running. */
  chooseUnheld(write: boolean, avoid?: readonly string[]): string | undefined;
}

/** Until when a server asked that an origin get no new attempt (the client's server holds). */
export interface OriginHolds {
  until(origin: string, at: number): number | undefined;
}

/** What the request machine asks when it needs an origin for its next attempt. */
export interface OriginAsk {
  /** A write that may have reached `previousOrigin` stays there (rules 2, 7). */
  pinned?: boolean | undefined;
  previousOrigin?: string | undefined;
  /** The origins that already failed this read, which is being retried (rule 7). */
  avoid?: readonly string[] | undefined;
}

/** Where the next attempt goes, from `at`; with the hold on it, and an origin free of holds, when it is held. */
export type AttemptOrigin =
  | { origin: string | undefined; at: number; holdUntil: undefined; alternative: undefined }
  | { origin: string; at: number; holdUntil: number; alternative: string | undefined };

/**
 * The origin of a request's next attempt. A pinned write goes where its last attempt did, and only that origin's
 * hold matters; any other attempt goes where the origin set says, a retried read passing over the origins that
 * failed it when another may take it. When a server holds that origin back, the machine waits, or (if the hold
 * is past its budget) takes the alternative: an origin free of holds, which a pinned write never has.
 */
export function attemptOrigin(
  ask: OriginAsk,
  write: boolean,
  origins: OriginChooser,
  holds: OriginHolds,
  at: number,
): AttemptOrigin {
  const origin = ask.pinned === true ? ask.previousOrigin : origins.choose(write, ask.avoid);
  const holdUntil = origin === undefined ? undefined : holds.until(origin, at);
  // One shape for both: the machine reads every field, and on Hermes reading one an object lacks walks its
  // prototypes.
  if (holdUntil === undefined) return { origin, at, holdUntil: undefined, alternative: undefined };
  return {
    origin: origin!,
    at,
    holdUntil,
    alternative: ask.pinned === true ? undefined : origins.chooseUnheld(write, ask.avoid),
  };
}
