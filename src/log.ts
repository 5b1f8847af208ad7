/**
 * Structured logging: one plain object per line, which Workers Logs indexes field by field.
 * Errors are passed as fields so their stack is kept. Never pass secrets here.
 */
type Fields = Record<string, unknown>;

function serialise(fields: Fields): Fields {
  const out: Fields = {};
  for (const [key, value] of Object.entries(fields)) {
    out[key] = value instanceof Error ? { name: value.name, message: value.message, stack: value.stack } : value;
  }
  return out;
}

export const log = {
  info(msg: string, fields: Fields = {}): void {
    console.log({ level: 'info', msg, ...serialise(fields) });
  },
  warn(msg: string, fields: Fields = {}): void {
    console.warn({ level: 'warn', msg, ...serialise(fields) });
  },
  error(msg: string, fields: Fields = {}): void {
    console.error({ level: 'error', msg, ...serialise(fields) });
  },
};
