/**
 * `succeeded, 40× failed offline`: each distinct label with how often it occurs, in first-seen order, `times`
 * between count and label (`×` in the HTML report, `x` in the terminal's plain ASCII table).
 */
export function countedList(labels: readonly string[], times: string): string {
  const counts = new Map<string, number>();
  for (const label of labels) counts.set(label, (counts.get(label) ?? 0) + 1);
  return [...counts].map(([label, n]) => (n === 1 ? label : `${n}${times} ${label}`)).join(', ');
}
