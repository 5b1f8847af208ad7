// A Worker beside the service in the same `wrangler dev` process (bench/propagation/workers.mjs,
// `startPair({ probe: true })`), calling it as another Worker of the account would: through the
// binding with this package's helper (`unleashFlags`), or through a fetch of `GET /api/frontend`
// over a plain service binding. The key comes with each request (`authorization`), so one probe
// serves any key made after it started. Anything else goes to the service.
//
// GET /probe/binding?flag=f → {"enabled": bool} or, refused, 403 {"kind", "name", "message"}
// GET /probe/http?flag=f    → {"enabled": bool} (the flag listed by GET /api/frontend, as
//   unleash-proxy-client asks by default: a POST counts as a write in src/db/sessions.ts, which
//   makes the isolate's next SDK request read the revision from D1, so polling with POSTs would
//   bring every change at once to both paths and measure nothing)
import { UnleashBindingError, unleashFlags } from '../../src/binding/client.ts';

const CONTEXT = { userId: 'probe', sessionId: 'probe' };

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const key = request.headers.get('authorization') ?? '';
    const flag = url.searchParams.get('flag') ?? '';
    if (url.pathname === '/probe/binding') {
      try {
        return Response.json({ enabled: await unleashFlags(env.FLAGS, key).isEnabled(flag, CONTEXT) });
      } catch (error) {
        if (!(error instanceof UnleashBindingError)) throw error;
        return Response.json({ kind: error.kind, name: error.name, message: error.message }, { status: 403 });
      }
    }
    if (url.pathname === '/probe/http') {
      const response = await env.UNLEASH.fetch(`http://service/api/frontend?${new URLSearchParams(CONTEXT)}`, {
        headers: { authorization: key },
      });
      if (!response.ok) return new Response(await response.text(), { status: response.status });
      const { toggles } = await response.json();
      return Response.json({ enabled: toggles.some((toggle) => toggle.name === flag) });
    }
    return env.UNLEASH.fetch(request);
  },
};
