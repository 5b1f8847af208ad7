/**
 * Tests that provoke a failure on purpose capture the log lines it writes and check them, so
 * that a passing run prints vitest's list and summary only. `src/log.ts` logs one plain object
 * per line: `{ level, msg, ...fields }`.
 */
import { onTestFinished, vi } from 'vitest';

export interface LogEntry {
  level: string;
  msg: string;
  [field: string]: unknown;
}

export interface CapturedLogs {
  /** Every object logged since the capture began, in order. */
  readonly entries: LogEntry[];
  /** Everything logged, as one text (for "contains"/"does not contain" checks). */
  text(): string;
  /** The `msg` of every entry, in order. */
  messages(): string[];
}

const LEVELS = ['log', 'info', 'warn', 'error', 'debug'] as const;

/** Captures console output until the end of the current test (or `restore()`), instead of printing it. */
export function captureLogs(): CapturedLogs & { restore(): void } {
  const entries: LogEntry[] = [];
  const spies = LEVELS.map((level) =>
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
      for (const arg of args) {
        entries.push(
          typeof arg === 'object' && arg !== null && 'msg' in arg
            ? (arg as LogEntry)
            : { level, msg: typeof arg === 'string' ? arg : JSON.stringify(arg) },
        );
      }
    }),
  );
  let restored = false;
  const restore = () => {
    if (restored) return;
    restored = true;
    for (const spy of spies) spy.mockRestore();
  };
  onTestFinished(restore);
  return {
    entries,
    text: () => JSON.stringify(entries),
    messages: () => entries.map((entry) => entry.msg),
    restore,
  };
}
