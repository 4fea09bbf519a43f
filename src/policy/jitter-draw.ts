/**
 * One step of mulberry32, as a pure function: the generator's state in, a number in [0, 1) and the next state
 * out. A machine keeps the state in its context (plain data, so a snapshot can be saved and two runners of the
 * same machine draw the same numbers) and draws its jitter from it.
 */
export function jitterDraw(state: number): { value: number; next: number } {
  const next = (state + 0x6d2b79f5) >>> 0;
  let t = next;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return { value: ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296, next };
}
