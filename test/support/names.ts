let serial = 0;

/** A name unique within the test run (storage is shared by the tests of a file): `<prefix>-<time>-<serial>`. */
export function unique(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${++serial}`;
}
