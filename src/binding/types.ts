/**
 * What the binding speaks (src/binding/entrypoint.ts), as types only: a calling Worker imports
 * these (through `unleash-edge-worker/binding`) without bundling any of our Worker's code.
 */

/**
 * Unleash's context, as the frontend API reads it (`POST /api/frontend`'s `context`): the
 * known fields at the top, anything else moves into `properties`, empty values are dropped.
 * `currentTime` is a property there too (date constraints compare with the time of the call).
 * What the binding fills in, as the frontend API does: `appName` `frontend-api`, `environment`
 * `default` and a fresh random `sessionId` when they are missing. There is no caller address:
 * pass `remoteAddress` (e.g. the request's `cf-connecting-ip`) for the `remoteAddress` strategy.
 */
export interface UnleashContext {
  userId?: string;
  sessionId?: string;
  remoteAddress?: string;
  environment?: string;
  appName?: string;
  currentTime?: string;
  properties?: Record<string, string | undefined>;
}

export interface VariantPayload {
  type: string;
  value: string;
}

/** A variant as the frontend API reports it (with Unleash's deprecated camelCase twin). */
export interface UnleashVariant {
  name: string;
  enabled: boolean;
  payload?: VariantPayload;
  feature_enabled: boolean;
  featureEnabled: boolean;
}

/** One flag that is on, as `/api/frontend` lists it. */
export interface UnleashToggle {
  name: string;
  enabled: true;
  variant: UnleashVariant;
  impressionData: boolean;
}

/** `getAll`'s answer: `POST /api/frontend`'s body. */
export interface UnleashToggles {
  toggles: UnleashToggle[];
}

/** One flag for one context, with what a caller needs to say why (OpenFeature's reasons). */
export interface UnleashEvaluation {
  name: string;
  enabled: boolean;
  variant: UnleashVariant;
  /** Emit an impression event for this evaluation (the flag's `impressionData`). */
  impressionData: boolean;
  /**
   * Whether the key may see this flag. A client (backend) key reads every flag of its scope
   * over HTTP, so a flag that is off is `found`; a frontend key sees only the flags that are
   * on for the context (as `/api/frontend` lists them), so for it `found` equals `enabled`.
   */
  found: boolean;
}

/** A key's view of the flags: what `withKey(key)` returns. */
export interface ScopedFlagsApi {
  isEnabled(name: string, context?: UnleashContext): Promise<boolean>;
  getVariant(name: string, context?: UnleashContext): Promise<UnleashVariant>;
  getAll(context?: UnleashContext): Promise<UnleashToggles>;
  evaluate(name: string, context?: UnleashContext): Promise<UnleashEvaluation>;
}

/** The entrypoint a calling Worker binds to (`entrypoint = "UnleashFlags"`). */
export interface UnleashFlagsApi {
  /**
   * The flags a client, backend or frontend key may read; refused (rejects) for any other
   * key. The stub it resolves to may be called at once (RPC promise pipelining).
   */
  withKey(key: string): Promise<ScopedFlagsApi>;
  /** The same answers with the key as the first argument: one RPC call each (no stub). */
  isEnabled(key: string, name: string, context?: UnleashContext): Promise<boolean>;
  getVariant(key: string, name: string, context?: UnleashContext): Promise<UnleashVariant>;
  getAll(key: string, context?: UnleashContext): Promise<UnleashToggles>;
  evaluate(key: string, name: string, context?: UnleashContext): Promise<UnleashEvaluation>;
}

/**
 * What a refused call rejects with, by kind: the rejection is an `Error` whose `kind` property is
 * the key here and whose message starts with the value (`UnleashBindingUnauthorized: …`), both
 * stable. Workers RPC keeps an error's message and own properties but not its class, so
 * `unleashFlags` (./client.ts) rethrows it as an `UnleashBindingError` with that `kind`.
 */
export const BINDING_ERRORS = {
  /** Unknown, revoked or expired key (HTTP's 401). */
  unauthorized: 'UnleashBindingUnauthorized',
  /** A key of a type the binding does not serve (admin, personal tokens; HTTP's 403). */
  forbidden: 'UnleashBindingForbidden',
  /** An argument that is not what the method takes (a flag name that is not a string; HTTP's 400). */
  invalid: 'UnleashBindingInvalid',
  /** Edge mode: a frontend key whose scope no backend key seen by the Edge covers (HTTP's 511). */
  noScope: 'UnleashBindingNoScope',
  /** Edge mode: the upstream could not be reached and nothing was kept for the key (HTTP's 503). */
  unavailable: 'UnleashBindingUnavailable',
} as const;

/** The kind of a refusal: what a caller branches on (`error.kind`). */
export type BindingErrorKind = keyof typeof BINDING_ERRORS;
