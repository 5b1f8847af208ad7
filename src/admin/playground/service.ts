/**
 * The playground: every flag of the chosen projects evaluated for a context, with the result
 * of each strategy, constraint and segment, in Unleash 6.10.1's shapes.
 *
 * Whether a flag is on and which variant it gives come from the frontend API's own path:
 * the environment's SDK snapshot (`snapshotFor`), the evaluator of the project scope
 * (`evaluatorFor`) and `Evaluator.evaluate`, so the playground and the frontend API cannot
 * disagree. The per-strategy breakdown is explained with the same engine functions
 * (evaluation/explain.ts); it also covers what SDKs never see (disabled strategies) and what
 * the engine cannot decide (custom strategies: "unknown", as Unleash's playground says).
 */
import type { ConstraintDoc } from '../../db/schema';
import { getDb } from '../../db/client';
import type { Env } from '../../env';
import { badRequest } from '../../http/errors';
import { evaluatorFor, snapshotFor, type SnapshotFeature } from '../../sdk/client-api/snapshot';
import type { Evaluator } from '../../sdk/evaluation/engine';
import { explainStrategy, type ExplainedSegment, type Verdict } from '../../sdk/evaluation/explain';
import type { Context, Feature, VariantDefinition } from '../../sdk/evaluation/types';
import { readPlaygroundRows, type PlaygroundRows } from './store';

/** Unleash's default cap on environments × flags × context combinations of one advanced query. */
const COMBINATION_LIMIT = 15_000;

const TOP_LEVEL = new Set(['userId', 'sessionId', 'remoteAddress', 'environment', 'appName', 'currentTime']);

type Projects = readonly string[] | '*' | undefined;
type InputContext = Record<string, unknown>;

/** Sets a key as an own property, so a `__proto__` field is data and never a prototype. */
function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * The evaluation context of a playground context, read as the frontend API reads one: the
 * known fields at the top, any other text field a property (explicit `properties` win), and
 * `environment` "default" when not given, as Unleash's evaluator defaults it.
 */
function evaluationContext(input: InputContext): Context {
  const properties: Record<string, string> = {};
  const top: Record<string, string> = {};
  for (const [key, value] of Object.entries(input)) {
    if (typeof value !== 'string') continue;
    if (TOP_LEVEL.has(key)) top[key] = value;
    else define(properties, key, value);
  }
  const explicit = input.properties;
  if (explicit !== null && typeof explicit === 'object' && !Array.isArray(explicit)) {
    for (const [key, value] of Object.entries(explicit)) {
      if (typeof value === 'string') define(properties, key, value);
    }
  }
  return { ...top, environment: top.environment ?? 'default', properties };
}

/**
 * A stored constraint with its result, keyed as Unleash's playground lists it: a strategy's
 * constraints get `inverted` and `values` first (the defaults its evaluator fills in), a
 * segment's keep their stored order.
 */
function constraintView(constraint: ConstraintDoc, result: boolean, defaults: boolean): Record<string, unknown> {
  const view: Record<string, unknown> = defaults ? { inverted: false, values: [] } : {};
  if (constraint.value !== undefined && constraint.value !== null) view.value = String(constraint.value);
  view.values = constraint.values ?? [];
  if (constraint.inverted !== undefined) view.inverted = constraint.inverted;
  view.operator = constraint.operator;
  view.contextName = constraint.contextName;
  if (constraint.caseInsensitive !== undefined) view.caseInsensitive = constraint.caseInsensitive;
  view.result = result;
  return view;
}

/** A strategy variant keyed as Unleash stores it: name, weight, payload, stickiness, weightType. */
function strategyVariantView(variant: VariantDefinition): Record<string, unknown> {
  return {
    name: variant.name,
    weight: variant.weight,
    ...(variant.payload ? { payload: variant.payload } : {}),
    stickiness: variant.stickiness,
    weightType: variant.weightType,
  };
}

/**
 * Keys in the order PostgreSQL's jsonb keeps them (shorter first, then by code unit), which
 * is how Unleash lists what it stores as jsonb: strategy parameters, environment variants.
 */
function jsonbKeyOrder(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

function jsonbOrdered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(jsonbOrdered);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort(jsonbKeyOrder)) define(out, key, jsonbOrdered((value as Record<string, unknown>)[key]));
  return out;
}

function stringParameters(parameters: Record<string, unknown> | null): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of Object.keys(parameters ?? {}).sort(jsonbKeyOrder)) {
    const value = parameters![key];
    define(out, key, typeof value === 'string' ? value : value === null || value === undefined ? '' : JSON.stringify(value));
  }
  return out;
}

interface EnvironmentView {
  environment: string;
  /** The flags of the project scope, in the order SDKs get them. */
  features: readonly SnapshotFeature[];
  evaluator: Evaluator;
  visible: ReadonlyMap<string, Feature>;
  strategiesOf: ReadonlyMap<string, PlaygroundRows['strategyRows']>;
  segmentsOf: ReadonlyMap<string, ExplainedSegment[]>;
}

async function environmentView(env: Env, environment: string, projects: Projects): Promise<EnvironmentView> {
  const scope = projects === undefined || projects === '*' ? ['*'] : projects;
  const [snapshot, rows] = await Promise.all([snapshotFor(env, environment), readPlaygroundRows(getDb(env), environment)]);
  const { evaluator, features } = evaluatorFor(snapshot, scope);
  const strategiesOf = new Map<string, PlaygroundRows['strategyRows']>();
  for (const row of rows.strategyRows) {
    const list = strategiesOf.get(row.featureName) ?? [];
    list.push(row);
    strategiesOf.set(row.featureName, list);
  }
  const segmentById = new Map(rows.segmentRows.map((row) => [row.id, { id: row.id, name: row.name, constraints: row.constraints ?? [] }]));
  const segmentsOf = new Map<string, ExplainedSegment[]>();
  for (const link of rows.linkRows) {
    const segment = segmentById.get(link.segmentId);
    if (!segment) continue;
    const list = segmentsOf.get(link.strategyId) ?? [];
    list.push(segment);
    segmentsOf.set(link.strategyId, list);
  }
  return {
    environment,
    features,
    evaluator,
    visible: new Map(features.map((feature) => [feature.name, feature.definition])),
    strategiesOf,
    segmentsOf,
  };
}

/** Whether the flag's parents let it be on, by the engine's rule (the frontend API's). */
function dependenciesSatisfied(view: EnvironmentView, feature: Feature, context: Context): boolean {
  const dependencies = feature.dependencies ?? [];
  return dependencies.every((dependency) => {
    const parent = view.visible.get(dependency.feature);
    if (!parent || (parent.dependencies ?? []).length > 0) return false;
    if (dependency.enabled === false) return !view.evaluator.isEnabled(parent.name, context);
    if ((dependency.variants ?? []).length > 0) {
      const variant = view.evaluator.getVariant(parent.name, context);
      return variant.feature_enabled && (dependency.variants ?? []).includes(variant.name);
    }
    return view.evaluator.isEnabled(parent.name, context);
  });
}

function editLink(project: string, feature: string, environment: string, strategyId: string): string {
  return `/projects/${project}/features/${feature}/strategies/edit?environmentId=${environment}&strategyId=${strategyId}`;
}

export interface FeatureEvaluation {
  isEnabled: boolean;
  isEnabledInCurrentEnvironment: boolean;
  hasUnsatisfiedDependency: boolean;
  variant: Record<string, unknown>;
  variants: readonly unknown[];
  name: string;
  projectId: string;
  strategies: { result: Verdict; data: Record<string, unknown>[] };
}

function evaluateFeature(view: EnvironmentView, feature: SnapshotFeature, context: Context): FeatureEvaluation {
  const definition = feature.definition;
  const { enabled, variant } = view.evaluator.evaluate(feature.name, context);
  let winner: { variant?: { name: string }; variants: readonly unknown[] } | undefined;
  let anyUnknown = false;
  const data = (view.strategiesOf.get(feature.name) ?? []).map((row) => {
    const segments = view.segmentsOf.get(row.id) ?? [];
    const parameters = stringParameters(row.parameters);
    const definitions = (row.variants ?? []) as VariantDefinition[];
    const variants = definitions.map(strategyVariantView);
    const explained = explainStrategy(
      { name: row.name, parameters, constraints: row.constraints ?? [], variants: definitions, disabled: row.disabled },
      segments,
      context,
      feature.name,
    );
    if (explained.enabled === true && winner === undefined) winner = { variant: explained.variant, variants };
    if (explained.enabled === 'unknown') anyUnknown = true;
    return {
      name: row.name,
      id: row.id,
      ...(row.title !== null && row.title !== undefined ? { title: row.title } : {}),
      disabled: row.disabled,
      parameters,
      result: {
        enabled: explained.enabled,
        evaluationStatus: explained.evaluationStatus,
        ...(explained.variant ? { variant: explained.variant, variants } : {}),
      },
      constraints: (row.constraints ?? []).map((constraint, index) => constraintView(constraint, explained.constraints[index]!, true)),
      segments: segments.map((segment, index) => ({
        name: segment.name,
        id: segment.id,
        result: explained.segments[index]!.result,
        constraints: segment.constraints.map((constraint, at) =>
          constraintView(constraint as ConstraintDoc, explained.segments[index]!.constraints[at]!, false),
        ),
      })),
      links: { edit: editLink(feature.project, feature.name, view.environment, row.id) },
    };
  });
  const result: Verdict = data.length === 0 ? definition.enabled : winner ? true : anyUnknown ? 'unknown' : false;
  const strategyVariant = enabled && winner?.variant !== undefined && winner.variant.name === variant.name;
  return {
    isEnabled: enabled,
    isEnabledInCurrentEnvironment: definition.enabled,
    hasUnsatisfiedDependency: !dependenciesSatisfied(view, definition, context),
    // The variant in the key order of each of Unleash's cases.
    variant: !enabled
      ? { name: 'disabled', enabled: false, feature_enabled: false }
      : strategyVariant
        ? { name: variant.name, enabled: true, ...(variant.payload ? { payload: variant.payload } : {}), feature_enabled: true }
        : variant.name === 'disabled' && !variant.enabled
          ? { feature_enabled: true, featureEnabled: true, name: 'disabled', enabled: false }
          : { ...variant, enabled: true, feature_enabled: true, featureEnabled: true },
    variants: strategyVariant && winner ? winner.variants : (jsonbOrdered(definition.variants ?? []) as unknown[]),
    name: feature.name,
    projectId: feature.project,
    strategies: { result, data },
  };
}

/** `POST /api/admin/playground`. */
export async function evaluatePlayground(env: Env, input: { environment: string; projects?: Projects; context: InputContext }) {
  const view = await environmentView(env, input.environment, input.projects);
  const context = evaluationContext(input.context);
  return view.features.map((feature) => evaluateFeature(view, feature, context));
}

/**
 * Unleash's `cleanContext`: `appName` goes last, and any field other than `properties` that
 * is not text is dropped and reported.
 */
function cleanContext(context: InputContext): { context: InputContext; removed: string[] } {
  const { appName, ...rest } = context;
  const removed: string[] = [];
  const kept: InputContext = {};
  for (const [key, value] of Object.entries(rest)) {
    if (key === 'properties' || typeof value === 'string') define(kept, key, value);
    else removed.push(key);
  }
  define(kept, 'appName', appName);
  return { context: kept, removed };
}

/** Each field's values, split at commas; `properties` are spread among the fields. */
function splitValues(context: InputContext): [string, unknown[]][] {
  const out = new Map<string, unknown[]>();
  for (const [key, value] of Object.entries(context)) {
    if (key === 'properties' && value !== null && typeof value === 'object') {
      for (const [name, nested] of splitValues(value as InputContext)) out.set(name, nested);
    } else out.set(key, typeof value === 'string' ? value.split(',') : [value]);
  }
  return [...out];
}

function combinations(fields: [string, unknown[]][]): InputContext[] {
  let results: InputContext[] = [{}];
  for (const [key, values] of fields) results = results.flatMap((partial) => values.map((value) => ({ ...partial, [key]: value })));
  return results;
}

/** `POST /api/admin/playground/advanced`. */
export async function evaluateAdvanced(env: Env, input: { environments: readonly string[]; projects?: Projects; context: InputContext }) {
  const views = await Promise.all(input.environments.map((environment) => environmentView(env, environment, input.projects)));
  const { context, removed } = cleanContext(input.context);
  const fields = splitValues(context);
  const contextCount = fields.reduce((product, [, values]) => product * values.length, 1);
  const featureCount = views[0]?.features.length ?? 0;
  const total = input.environments.length * featureCount * contextCount;
  if (total > COMBINATION_LIMIT) {
    throw badRequest(
      `Rejecting evaluation as it would generate ${total} combinations exceeding ${COMBINATION_LIMIT} limit. ` +
        `Please reduce the number of selected environments (${input.environments.length}), features (${featureCount}), context field combinations (${contextCount}).`,
    );
  }
  const contexts = featureCount === 0 ? [] : combinations(fields);
  const byName = new Map<string, { name: string; projectId: string; environments: Record<string, unknown[]> }>();
  for (const view of views) {
    for (const single of contexts) {
      const evaluation = evaluationContext(single);
      for (const feature of view.features) {
        const { isEnabled, isEnabledInCurrentEnvironment, hasUnsatisfiedDependency, variant, variants, name, projectId, strategies } =
          evaluateFeature(view, feature, evaluation);
        let entry = byName.get(name);
        if (!entry) byName.set(name, (entry = { name, projectId, environments: Object.create(null) as Record<string, unknown[]> }));
        (entry.environments[view.environment] ??= []).push({
          isEnabled,
          isEnabledInCurrentEnvironment,
          hasUnsatisfiedDependency,
          variant,
          context: single,
          variants,
          name,
          environment: view.environment,
          projectId,
          strategies,
        });
      }
    }
  }
  return { features: [...byName.values()], removed };
}
