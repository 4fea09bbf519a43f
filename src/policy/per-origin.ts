/**
 * What a per-origin record (`backupFailures`, `backupDownUntil`) holds for `id`: own properties only. Origin
 * ids are the app's strings, and `constructor`, `toString` or `__proto__` read through a plain `record[id]`
 * would find Object.prototype's members. Records rather than Maps: the machine's context stays plain JSON,
 * which the Stately inspector serialises (a Map would show as `{}`). Writes use a computed key
 * (`{ ...record, [id]: value }`), which makes an own property even for `__proto__`.
 */
export const perOrigin = (record: Readonly<Record<string, number>>, id: string): number | undefined =>
  Object.hasOwn(record, id) ? record[id] : undefined;
