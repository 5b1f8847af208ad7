/** What the binding's tests share (test/binding.test.ts, test/edge/binding.test.ts). */
import { exports } from 'cloudflare:workers';

/** The loopback service binding to the Worker's `UnleashFlags` entrypoint. */
export const flags = () => exports.UnleashFlags;

/**
 * What a call was refused with, or `answered`. Awaited here, in one place: an RPC promise
 * given to `expect` would have its properties read, and each read of a rejected RPC promise's
 * property is a pipelined call that rejects too, unhandled.
 */
export async function refusal(call: PromiseLike<unknown>): Promise<string> {
  try {
    await call;
    return 'answered';
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** What a call was refused with, as the caller sees it over RPC: its class name, `kind` and message. */
export async function refusedWith(call: PromiseLike<unknown>): Promise<{ name: string; kind: unknown; message: string } | 'answered'> {
  try {
    await call;
    return 'answered';
  } catch (error) {
    if (!(error instanceof Error)) throw error;
    return { name: error.constructor.name, kind: (error as { kind?: unknown }).kind, message: error.message };
  }
}
