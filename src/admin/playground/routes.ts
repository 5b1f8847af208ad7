/**
 * The playground (`/api/admin/playground`): how every flag evaluates for a context, strategy
 * by strategy. Open to any admin-API caller, as in Unleash (permission NONE). The request is
 * echoed back as `input` exactly as sent, so the handler reads the body itself.
 */
import { readJsonBody } from '../../http/body';
import { json, untyped } from '../../http/responses';
import { authenticated, route, type Route } from '../../http/route';
import { parseInput } from '../../http/validation';
import { AdvancedPlaygroundRequestSchema, AdvancedPlaygroundResponse, PlaygroundRequestSchema, PlaygroundResponse } from './schema';
import { evaluateAdvanced, evaluatePlayground } from './service';

export const routes: Route[] = [
  route({
    method: 'POST',
    path: '/api/admin/playground',
    badRequestName: 'BadDataError',
    access: authenticated(),
    tag: 'Playground',
    operationId: 'getPlayground',
    summary: 'Evaluate an Unleash context against a set of environments and projects.',
    description:
      "Deprecated in Unleash. Evaluates every flag of the given projects in one environment for the context, and answers with the input and each flag's result, strategy by strategy.",
    body: PlaygroundRequestSchema,
    bodyReadByHandler: true,
    responses: { 200: { description: 'The flags and how they evaluate', schema: PlaygroundResponse } },
    errors: [400, 413, 415],
    handler: async ({ request, env }) => {
      const raw = await readJsonBody(request);
      const input = parseInput(PlaygroundRequestSchema, raw, '/body');
      // The context as sent (its key order too), once it is known to be valid.
      // The evaluation views are built as loose records (service.ts): this answer is not typed yet.
      return untyped(json({ input: raw, features: await evaluatePlayground(env, { ...input, context: (raw as typeof input).context }) }));
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/playground/advanced',
    badRequestName: 'BadDataError',
    access: authenticated(),
    tag: 'Playground',
    operationId: 'getAdvancedPlayground',
    summary: 'Batch evaluate an Unleash context against a set of environments and projects.',
    description:
      'Comma-separated values of a context field are evaluated one by one, in every combination, in each environment; at most 15000 evaluations (environments × flags × combinations) per request.',
    body: AdvancedPlaygroundRequestSchema,
    bodyReadByHandler: true,
    responses: { 200: { description: 'The flags and how they evaluate per environment and context', schema: AdvancedPlaygroundResponse } },
    errors: [400, 413, 415],
    handler: async ({ request, env }) => {
      const raw = await readJsonBody(request);
      const input = parseInput(AdvancedPlaygroundRequestSchema, raw, '/body');
      const { features, removed } = await evaluateAdvanced(env, { ...input, context: (raw as typeof input).context });
      // The evaluation views are built as loose records (service.ts): this answer is not typed yet.
      return untyped(
        json(removed.length > 0 ? { features, input: raw, warnings: { invalidContextProperties: removed } } : { features, input: raw }),
      );
    },
  }),
];
