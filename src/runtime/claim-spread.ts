/**
 * The order in which a runner on a store with per-entry claims (`OutboxStore.claims`) queues the entries it reads
 * from the store. N runners that read one queue and walk it in the same order all ask for the same next entry:
 * all but one are told `taken`, over and over. Each runner therefore walks the entries that wait for nobody
 * (no `orderKey`, with `order: 'per-key'`) in an order of its own, so that runners mostly ask for different ones.
 *
 * - Only entries without an `orderKey` move, and only among the places such entries hold: every keyed entry
 *   keeps its place, so each key's entries keep their order and their place relative to the rest.
 * - They move within windows of SPREAD_WINDOW such entries in store order, so an old entry still goes before
 *   much newer ones: a runner with a long backlog sends roughly oldest first, as before. The window must be
 *   large against the sends in flight across the fleet: `npm run bench:pg` (3 runners of 4 sends) asked about
 *   twice as many claims as entries with a window of 32, about 1.3 times with 256.
 * - The order within a window comes from a hash of the runner's owner name and the entry's id: the same runner
 *   always walks the same entries in the same order (nothing random to seed in tests), two runners differently.
 */
export const SPREAD_WINDOW = 256;

/** Reorders `entries` (in store order) for the runner `owner`, as above; returns a new array. */
export function spreadUnkeyed<T extends { id: string; orderKey?: string | undefined }>(
  entries: readonly T[],
  owner: string,
): T[] {
  const places: number[] = [];
  for (const [index, entry] of entries.entries()) if (entry.orderKey === undefined) places.push(index);
  const spread = [...entries];
  for (let start = 0; start < places.length; start += SPREAD_WINDOW) {
    const window = places.slice(start, start + SPREAD_WINDOW);
    const ranked = window
      .map((place) => ({ entry: entries[place]!, rank: fnv1a(`${owner}\u0000${entries[place]!.id}`) }))
      .sort((a, b) => a.rank - b.rank);
    for (const [i, place] of window.entries()) spread[place] = ranked[i]!.entry;
  }
  return spread;
}

/** FNV-1a, 32 bits: a cheap, well-spread hash of a string; not for anything secret. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
