/**
 * When a request that waits for a hold is released: a hold that many requests wait out (a server's Retry-After,
 * a spent `RateLimit` quota, the client's quiet period after a throttle) would release them all at the same
 * instant, a herd that meets the origin as it comes back; each is released instead at a jittered time within
 * `spreadMs` after the hold ends. A request's own send slot (`rate`) is already its own time and is kept. Pure:
 * `random` is injected (the request's).
 *
 * A hold that ends within the budget (`deadline`) is never pushed past it: the spread shrinks to fit, so that a
 * request that may wait for the hold still has time for its attempt.
 */
export function holdReleaseAt(
  holdUntil: number,
  holdBy: 'quota' | 'quiet' | 'rate' | undefined,
  spreadMs: number,
  random: () => number,
  deadline: number,
): number {
  if (holdBy === 'rate' || !(spreadMs > 0)) return holdUntil;
  const roomMs = holdUntil < deadline ? Math.min(spreadMs, deadline - 1 - holdUntil) : spreadMs;
  return holdUntil + Math.floor(random() * Math.max(0, roomMs));
}
