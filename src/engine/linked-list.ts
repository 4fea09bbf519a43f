/** A list linked through `next`: an actor's armed timers and running children, a few at a time, in order. */
export interface Linked<T> {
  next: T | undefined;
}

/** The list with `item` at its end. */
export function append<T extends Linked<T>>(head: T | undefined, item: T): T {
  if (head === undefined) return item;
  let last = head;
  while (last.next !== undefined) last = last.next;
  last.next = item;
  return head;
}

/** The list without `item` (the same list when `item` is not on it). */
export function unlink<T extends Linked<T>>(head: T | undefined, item: T): T | undefined {
  if (head === item) return item.next;
  for (let node = head; node !== undefined; node = node.next) {
    if (node.next === item) {
      node.next = item.next;
      break;
    }
  }
  return head;
}

/** Whether `item` is on the list. */
export function listed<T extends Linked<T>>(head: T | undefined, item: T): boolean {
  for (let node = head; node !== undefined; node = node.next) if (node === item) return true;
  return false;
}
