/**
 * Flags for other Workers over a service binding (Workers RPC), answered in this isolate from
 * the snapshot the SDK APIs answer from, by the same engine: what `POST /api/frontend` would
 * answer for the same key and context, without HTTP. See docs/binding.md.
 *
 * A caller binds to the `UnleashFlags` entrypoint and scopes itself with a key:
 * `env.FLAGS.withKey(env.UNLEASH_KEY).isEnabled('flag', { userId })`. The key is a client,
 * backend or frontend key, checked as HTTP checks it; the stub `withKey` returns holds the key
 * (its hash for the service, the key itself for Edge mode's upstream, both in a private field
 * no RPC caller can read) and checks it again on every call, so a revocation applies to a stub
 * already handed out. Why a key argument and not the binding's `props`: props are written in the
 * calling Worker's own configuration, so they prove nothing the caller could not choose, and
 * a secret there would sit in plain text in a config file; a key is proof the caller holds it,
 * and can come from a Worker secret.
 */
import { RpcTarget, WorkerEntrypoint } from 'cloudflare:workers';
import { MAX_KEY_LENGTH } from '../auth/authenticate';
import { hashOfKey } from '../auth/key-hashes';
import type { ApiTokenRecord, ApiTokenType } from '../auth/principal';
import type { Env } from '../env';
import { evaluatorFor, inScope } from '../sdk/client-api/snapshot';
import { disabledVariant } from '../sdk/evaluation/engine';
import type { Context } from '../sdk/evaluation/types';
import { contextFromBody } from '../sdk/frontend-api/context';
import { frontendPlan } from '../sdk/frontend-api/routes';
import { listenWhileServing } from '../sdk/push/listen';
import { sourceFor, type BindingSource, type PresentedKey } from './source';
import { asRefusal, refused, UNKNOWN_KEY } from './refusal';
import { type ScopedFlagsApi, type UnleashContext, type UnleashEvaluation, type UnleashToggles, type UnleashVariant } from './types';
import { countUsage, flushDueUsage } from './usage';

/** The key types the binding serves: those of the SDK APIs (the frontend API's and the client API's). */
const SERVED_TYPES: readonly ApiTokenType[] = ['client', 'backend', 'frontend'];

/** The context as `POST /api/frontend` reads `{ context }` (no caller address: the caller passes it). */
function contextOf(context: unknown): Context {
  return contextFromBody({ context }, null);
}

function nameOf(name: unknown): string {
  if (typeof name !== 'string') throw refused('invalid', 'a flag name is a string');
  return name;
}

function rethrowRefusal(error: unknown): never {
  throw asRefusal(error);
}

/** The answers for one key: what the scoped stub and the key-first methods both call. */
class KeyReader {
  constructor(
    private readonly env: Env,
    private readonly ctx: ExecutionContext,
    private readonly source: BindingSource,
    private readonly key: PresentedKey,
  ) {}

  /** The key's record, checked on every call (revocation and expiry apply to a stub already given out). */
  async token(): Promise<ApiTokenRecord> {
    // The isolate hears changes made elsewhere through the change feed, as while a stream is open.
    const listening = listenWhileServing(this.env, this.ctx);
    const token = await this.source.trustedKey(this.env, this.ctx, this.key).catch(rethrowRefusal);
    await listening;
    if (token === null) throw refused('unauthorized', UNKNOWN_KEY);
    if (!SERVED_TYPES.includes(token.type)) throw refused('forbidden', `${token.type} keys cannot read flags through the binding`);
    return token;
  }

  /** `POST /api/frontend`'s body for this key and context: the flags that are on, with their variants. */
  async getAll(context: unknown): Promise<UnleashToggles> {
    const token = await this.token();
    const snapshot = await this.source.snapshot(this.env, token, this.key).catch(rethrowRefusal);
    return { toggles: frontendPlan(snapshot, token.projects).toggles(contextOf(context)) };
  }

  /** One flag: on or off, its variant, whether to emit an impression, whether the key may see it. */
  async evaluate(name: unknown, context: unknown): Promise<UnleashEvaluation> {
    const flagName = nameOf(name);
    const token = await this.token();
    const snapshot = await this.source.snapshot(this.env, token, this.key).catch(rethrowRefusal);
    const evaluationContext = contextOf(context);
    const feature = snapshot.byName.get(flagName);
    const visible = feature !== undefined && inScope(token.projects, feature.project);
    const flag = visible ? evaluatorFor(snapshot, token.projects).evaluator.flag(flagName) : undefined;
    // Off in the environment: never on, as the frontend API's plan leaves it out.
    const outcome = flag === undefined || !feature!.definition.enabled ? -1 : flag.outcome(evaluationContext);
    const enabled = outcome >= 0;
    const variant: UnleashVariant = enabled ? flag!.results[outcome]! : disabledVariant(false);
    if (visible) {
      const send = (env: Env, post: Parameters<BindingSource['sendUsage']>[3]) => this.source.sendUsage(env, token, this.key, post);
      countUsage(token, send, evaluationContext.appName ?? 'frontend-api', flagName, enabled, enabled ? variant.name : undefined);
      flushDueUsage(this.env, this.ctx);
    }
    // A frontend key sees only the flags that are on (as /api/frontend lists them).
    const found = token.type === 'frontend' ? enabled : visible;
    return { name: flagName, enabled, variant, impressionData: found ? feature!.impressionData : false, found };
  }
}

/** One key's view of the flags (what `withKey` returns); its methods are the RPC surface. */
class ScopedFlags extends RpcTarget implements ScopedFlagsApi {
  // A private field is not reachable over RPC: only the methods below are.
  readonly #reader: KeyReader;

  constructor(reader: KeyReader) {
    super();
    this.#reader = reader;
  }

  async isEnabled(name: string, context?: UnleashContext): Promise<boolean> {
    return (await this.#reader.evaluate(name, context)).enabled;
  }

  async getVariant(name: string, context?: UnleashContext): Promise<UnleashVariant> {
    return (await this.#reader.evaluate(name, context)).variant;
  }

  getAll(context?: UnleashContext): Promise<UnleashToggles> {
    return this.#reader.getAll(context);
  }

  evaluate(name: string, context?: UnleashContext): Promise<UnleashEvaluation> {
    return this.#reader.evaluate(name, context);
  }
}

/**
 * The entrypoint other Workers bind to (`entrypoint = "UnleashFlags"` in their wrangler config).
 * `withKey(key)` gives a stub scoped to the key; the same four methods also take the key as
 * their first argument, one RPC call each instead of two (the typed helper uses those).
 */
export class UnleashFlags extends WorkerEntrypoint<Env> {
  async #reader(key: unknown): Promise<KeyReader> {
    if (typeof key !== 'string' || key === '' || key.length > MAX_KEY_LENGTH || !key.isWellFormed())
      throw refused('unauthorized', UNKNOWN_KEY);
    const secret = key.trim();
    return new KeyReader(this.env, this.ctx, sourceFor(this.env), { hash: await hashOfKey(secret), secret });
  }

  /** The flags a client, backend or frontend key may read. Rejects for any other key. */
  async withKey(key: string): Promise<ScopedFlags> {
    const reader = await this.#reader(key);
    await reader.token();
    return new ScopedFlags(reader);
  }

  async isEnabled(key: string, name: string, context?: UnleashContext): Promise<boolean> {
    return (await (await this.#reader(key)).evaluate(name, context)).enabled;
  }

  async getVariant(key: string, name: string, context?: UnleashContext): Promise<UnleashVariant> {
    return (await (await this.#reader(key)).evaluate(name, context)).variant;
  }

  async getAll(key: string, context?: UnleashContext): Promise<UnleashToggles> {
    return (await this.#reader(key)).getAll(context);
  }

  async evaluate(key: string, name: string, context?: UnleashContext): Promise<UnleashEvaluation> {
    return (await this.#reader(key)).evaluate(name, context);
  }
}
