/**
 * A Worker reading flags from unleash-worker through its service binding (docs/binding.md):
 *
 * - `GET /example?userId=42&flag=my-flag`: the flag through the typed helper and through
 *   OpenFeature, and every flag that is on for that user;
 * - `GET /example/bench?mode=binding|fetch&op=decision|all&n=500&flag=my-flag`: `n` decisions
 *   (or `getAll`s) through the binding, or through a fetch of the frontend API, each for another
 *   user (bench/binding measures the CPU of both in one run);
 * - anything else goes to the service itself (its API and admin UI) through `UNLEASH`.
 */
import { OpenFeature } from '@openfeature/server-sdk';
import { unleashFlags, type UnleashContext, type UnleashFlagsApi, type UnleashToggles } from 'unleash-edge-worker/binding';
import { UnleashBindingProvider } from 'unleash-edge-worker/openfeature';

interface Env {
  FLAGS: UnleashFlagsApi;
  UNLEASH: Fetcher;
  UNLEASH_KEY?: string;
}

const providers = new WeakMap<object, string>();

/** OpenFeature is one global per isolate: its provider is set once per key. */
async function openFeatureFor(env: Env, key: string) {
  if (providers.get(OpenFeature) !== key) {
    await OpenFeature.setProviderAndWait(new UnleashBindingProvider(env.FLAGS, key));
    providers.set(OpenFeature, key);
  }
  return OpenFeature.getClient();
}

function json(body: unknown, status = 200): Response {
  return Response.json(body, { status, headers: { 'cache-control': 'no-store' } });
}

/** One decision (or all flags) through a fetch of the frontend API, as a Worker without the binding does it. */
async function overHttp(env: Env, key: string, context: UnleashContext, flag: string | null): Promise<unknown> {
  const response = await env.UNLEASH.fetch('http://unleash-worker/api/frontend', {
    method: 'POST',
    headers: { authorization: key, 'content-type': 'application/json', 'cf-connecting-ip': context.remoteAddress ?? '127.0.0.1' },
    body: JSON.stringify({ context }),
  });
  if (!response.ok) throw new Error(`frontend API answered ${response.status}`);
  const all = await response.json<UnleashToggles>();
  return flag === null ? all : all.toggles.some((toggle) => toggle.name === flag);
}

async function bench(env: Env, key: string, url: URL): Promise<Response> {
  const mode = url.searchParams.get('mode') === 'fetch' ? 'fetch' : 'binding';
  const flag = url.searchParams.get('op') === 'all' ? null : (url.searchParams.get('flag') ?? 'bench.flag');
  const n = Math.min(Math.max(Number(url.searchParams.get('n')) || 100, 1), 5000);
  const run = url.searchParams.get('run') ?? '0';
  const flags = unleashFlags(env.FLAGS, key);
  let on = 0;
  for (let i = 0; i < n; i++) {
    // Another user each time, so that no answer cache serves a repeat.
    const context: UnleashContext = { userId: `u-${run}-${i}`, sessionId: `s-${run}-${i}`, remoteAddress: `10.0.${i >> 8}.${i & 255}` };
    const answer =
      mode === 'fetch'
        ? await overHttp(env, key, context, flag)
        : flag === null
          ? await flags.getAll(context)
          : await flags.isEnabled(flag, context);
    if (answer === true || (typeof answer === 'object' && answer !== null && (answer as UnleashToggles).toggles.length > 0)) on++;
  }
  return json({ mode, op: flag === null ? 'all' : 'decision', n, on });
}

export default {
  async fetch(request, env): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname !== '/example' && !url.pathname.startsWith('/example/')) return env.UNLEASH.fetch(request);
    const key = env.UNLEASH_KEY;
    if (!key) return json({ error: 'set UNLEASH_KEY (a backend or frontend key) in examples/consumer/.dev.vars' }, 500);
    if (url.pathname === '/example/bench') return bench(env, key, url);

    const flag = url.searchParams.get('flag') ?? 'example-flag';
    const context: UnleashContext = {
      userId: url.searchParams.get('userId') ?? undefined,
      remoteAddress: request.headers.get('cf-connecting-ip') ?? undefined,
      properties: { region: url.searchParams.get('region') ?? undefined },
    };
    // The typed helper: one line of setup, one RPC round trip per call.
    const flags = unleashFlags(env.FLAGS, key, { onImpression: (event) => console.log('impression', JSON.stringify(event)) });
    const [enabled, variant, all] = await Promise.all([
      flags.isEnabled(flag, context),
      flags.getVariant(flag, context),
      flags.getAll(context),
    ]);
    // The same flag through OpenFeature: targetingKey is Unleash's userId.
    const client = await openFeatureFor(env, key);
    const region = context.properties?.region;
    const details = await client.getBooleanDetails(flag, false, {
      ...(context.userId ? { targetingKey: context.userId } : {}),
      ...(region ? { region } : {}),
    });
    return json({
      flag,
      enabled,
      variant,
      openFeature: { value: details.value, reason: details.reason, errorCode: details.errorCode },
      all,
    });
  },
} satisfies ExportedHandler<Env>;
