/**
 * `record[key]` for keys that come from user data (field keys, form names): only the object's own property, so
 * a key named like a prototype property (`constructor`, `toString`) reads as absent, not as a function.
 */
export function own<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
