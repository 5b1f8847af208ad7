/**
 * What the evaluator reads: the client-API feature shape (the same one SDKs receive), kept
 * loose because the client-specification states leave out or null many fields.
 */
export interface Constraint {
  contextName: string;
  operator: string;
  values?: readonly string[] | null;
  value?: string | null;
  caseInsensitive?: boolean;
  inverted?: boolean;
}

export interface Payload {
  type: string;
  value: string;
}

interface Override {
  contextName: string;
  values: readonly string[];
}

export interface VariantDefinition {
  name: string;
  weight: number;
  weightType?: string;
  stickiness?: string | null;
  payload?: Payload | null;
  overrides?: readonly Override[] | null;
}

export interface Strategy {
  name: string;
  parameters?: Readonly<Record<string, unknown>> | null;
  constraints?: readonly Constraint[] | null;
  segments?: readonly number[] | null;
  variants?: readonly VariantDefinition[] | null;
}

interface Dependency {
  feature: string;
  enabled?: boolean;
  variants?: readonly string[] | null;
}

export interface Feature {
  name: string;
  enabled: boolean;
  strategies?: readonly Strategy[] | null;
  variants?: readonly VariantDefinition[] | null;
  dependencies?: readonly Dependency[] | null;
  impressionData?: boolean;
}

export interface Segment {
  id: number;
  constraints: readonly Constraint[];
}

/** The evaluation context, as the SDKs define it. */
export interface Context {
  userId?: string;
  sessionId?: string;
  remoteAddress?: string;
  environment?: string;
  appName?: string;
  currentTime?: string | Date;
  properties?: Readonly<Record<string, string | null | undefined>>;
}

/** A variant as SDKs and the frontend API report it (with Unleash's deprecated camelCase twin). */
export interface VariantResult {
  name: string;
  enabled: boolean;
  payload?: Payload;
  feature_enabled: boolean;
  featureEnabled: boolean;
}
