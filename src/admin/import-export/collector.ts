/**
 * The first half of an import's validation, element by element as the body streams in:
 * each element is checked against its schema, normalised into a staged item and handed to
 * the stager (in the chunk of its feature), and only compact facts are kept — the names the
 * payload mentions and how, strategy types, segment ids, tag types, and the problems found
 * so far. The small arrays (tag types, context fields, segments, dependencies) are kept whole.
 * `service.ts` finishes the analysis from these facts once the body has been read.
 */
import * as v from 'valibot';
import { ApiError, badData, type ErrorDetail } from '../../http/errors';
import { describeIssues } from '../../http/validation';
import type { ImportedConstraint, ImportedStrategy, ImportedVariant } from './schema';
import { ITEM_SCHEMAS, type ImportData } from './schema';
import type { StagedEnvironment, StagedFeature, StagedLinks, StagedStrategy, StagedTag } from './plan';
import { LINKS_PER_FEATURE, normaliseUrl, tooManyLinks, ulid } from '../feature-links/service';
import type { ImportStager } from './staging';
import type { Catalogue } from './store/reads';
import { importedWeights } from '../features/weights';
import { constraintProblem } from '../features/rules';
import type { VariantDoc } from '../../db/schema';

/** How a name is used in the payload (bits of NameInfo.flags). */
const IMPORTED = 1;
export const BY_STRATEGY = 2;
export const BY_ENVIRONMENT = 4;
export const BY_TAG = 8;
export const BY_LINK = 16;

export interface NameInfo {
  chunk: number;
  flags: number;
  /** Links the payload gives the feature so far (its stored ones are replaced by them). */
  links?: number;
  /** Where the payload's first link of the feature is (LinkProblem.seq), for the 404 of an unknown feature. */
  firstLink?: number;
}

/**
 * The first link Unleash would refuse while writing them, in payload order: too many for its
 * flag (403) or not a URL (400). Whether the flag exists is only known once the body has
 * been read (a 404, see service.ts); the earliest of these wins, as Unleash stops at it.
 */
export interface LinkProblem {
  seq: number;
  error: ApiError;
}

/** A problem tied to a feature: reported only if the feature is imported or known (§6.4). */
export interface FeatureProblem {
  list: 'noVariable' | 'over' | 'invalidConstraints';
  /** Strategies' problems are listed before environments' ones, each in payload order. */
  rank: number;
  seq: number;
  feature: string;
  text: string;
}

/** A constraint on a context field the catalogue does not have: checked once the payload's context fields are known. */
export interface PendingConstraint {
  seq: number;
  feature: string;
  constraint: ImportedConstraint;
}

/** Schema problems kept per request: past this, one more detail says how many were left out. */
const MAX_DETAILS = 1_000;
/**
 * What the collector may hold while the body streams in, so that no body can exhaust the
 * Worker's memory: distinct feature names (a Map entry each, ~100 bytes), and the elements
 * kept whole (the small arrays, constraints waiting for the payload's context fields).
 */
const MAX_NAMES = 250_000;
const MAX_KEPT_BYTES = 16 * 1024 * 1024;

/** The order valibot reports the import schema's keys in (schema order), for details that arrive out of it. */
const DATA_KEY_ORDER = [
  'features',
  'featureStrategies',
  'featureEnvironments',
  'contextFields',
  'featureTags',
  'segments',
  'tagTypes',
  'dependencies',
  'links',
];

type SmallArrays = Pick<ImportData, 'tagTypes'> & Required<Pick<ImportData, 'contextFields' | 'segments' | 'dependencies'>>;

export class ImportCollector {
  readonly names = new Map<string, NameInfo>();
  /** First occurrences of `data.features` names, in payload order. */
  readonly importedNames: string[] = [];
  readonly duplicates: string[] = [];
  readonly strategyTypes = new Set<string>();
  readonly usedSegmentIds = new Set<number>();
  readonly usedTagTypes = new Set<string>();
  readonly problems: FeatureProblem[] = [];
  readonly pendingConstraints: PendingConstraint[] = [];
  readonly small: SmallArrays = { tagTypes: [], contextFields: [], segments: [], dependencies: [] };
  strategyCount = 0;
  environmentVariants = false;
  linkProblem: LinkProblem | null = null;
  private linkSeq = 0;
  private seq = 0;
  private keptBytes = 0;
  private readonly details: { rank: number[]; detail: ErrorDetail }[] = [];
  private detailCount = 0;

  constructor(
    readonly catalogue: Catalogue,
    private readonly stager: ImportStager,
  ) {}

  /** One element of `data.<key>`. */
  async item(key: string, index: number, value: unknown): Promise<void> {
    // Own keys only: `constructor` or `__proto__` in a body must not reach Object's members.
    const schema = Object.hasOwn(ITEM_SCHEMAS, key) ? ITEM_SCHEMAS[key as keyof typeof ITEM_SCHEMAS] : undefined;
    // Elements of keys the schema does not know are dropped; the skeleton check reports the key.
    if (schema === undefined) return;
    const result = v.safeParse(schema, value);
    if (!result.success) {
      this.addIssues(['data', key, index], result.issues);
      return;
    }
    // Nothing is staged once the payload is known to be invalid, but the facts are still
    // collected: the answer is a schema error then, and it lists every element's problems.
    const output = result.output;
    switch (key) {
      case 'features':
        return this.feature(output as ImportData['features'][number]);
      case 'featureStrategies':
        return this.strategy(output as ImportedStrategy);
      case 'featureEnvironments':
        return this.environment(output as NonNullable<ImportData['featureEnvironments']>[number]);
      case 'featureTags':
        return this.tag(output as NonNullable<ImportData['featureTags']>[number]);
      case 'tagTypes':
        this.keep(output);
        this.small.tagTypes.push(output as ImportData['tagTypes'][number]);
        return;
      case 'contextFields':
        this.keep(output);
        this.small.contextFields.push(output as NonNullable<ImportData['contextFields']>[number]);
        return;
      case 'segments':
        this.keep(output);
        this.small.segments.push(output as NonNullable<ImportData['segments']>[number]);
        return;
      case 'dependencies':
        this.keep(output);
        this.small.dependencies.push(output as NonNullable<ImportData['dependencies']>[number]);
        return;
      case 'links':
        return this.links(output as NonNullable<ImportData['links']>[number]);
    }
  }

  get hasSchemaIssues(): boolean {
    return this.detailCount > 0;
  }

  /** Adds schema issues found outside the elements (the body's skeleton). */
  addIssues(prefix: (string | number)[], issues: readonly v.BaseIssue<unknown>[]): void {
    for (const detail of describeIssues('/body', issues, prefix)) {
      this.detailCount++;
      if (this.details.length < MAX_DETAILS) this.details.push({ rank: rankOf(detail.path ?? ''), detail });
    }
  }

  /** Every schema problem, in the order one validation of the whole body would list them. */
  schemaDetails(): ErrorDetail[] {
    const sorted = this.details
      .map((entry, order) => ({ ...entry, order }))
      .sort((a, b) => compareRanks(a.rank, b.rank) || a.order - b.order)
      .map((entry) => entry.detail);
    if (this.detailCount > sorted.length) {
      sorted.push({ message: `${this.detailCount - sorted.length} more problems were found and are not listed.` });
    }
    return sorted;
  }

  /**
   * Counts bytes held in memory until the body has been read against MAX_KEPT_BYTES: the
   * reader's kept keys and values (extra top-level keys, non-array values in `data`) as well
   * as the collector's own.
   */
  keepBytes(bytes: number): void {
    this.keptBytes += bytes;
    if (this.keptBytes > MAX_KEPT_BYTES) {
      throw new ApiError(
        413,
        'PayloadTooLargeError',
        `The import's tag types, context fields, segments, dependencies, constraints on new context fields, repeated feature names, other keys and values, and problems found take more than ${MAX_KEPT_BYTES} bytes.`,
      );
    }
  }

  private keep(value: unknown): void {
    this.keepBytes(typeof value === 'string' ? value.length : JSON.stringify(value).length);
  }

  private nameInfo(name: string): NameInfo {
    let info = this.names.get(name);
    if (info === undefined) {
      if (this.names.size >= MAX_NAMES) {
        throw new ApiError(413, 'PayloadTooLargeError', `An import may name at most ${MAX_NAMES} features; send more as several imports.`);
      }
      info = { chunk: this.stager.assignChunk(), flags: 0 };
      this.names.set(name, info);
    }
    return info;
  }

  private async stage(info: NameInfo, key: 'features' | 'strategies' | 'environments' | 'tags' | 'links', item: object): Promise<void> {
    if (this.hasSchemaIssues) return;
    await this.stager.add(info.chunk, key, JSON.stringify(item));
  }

  private async feature(feature: ImportData['features'][number]): Promise<void> {
    const info = this.nameInfo(feature.name);
    if (info.flags & IMPORTED) {
      // Each repetition is an entry of `duplicates`: a body of one name repeated would
      // otherwise grow it by millions.
      this.keepBytes(feature.name.length + 16);
      this.duplicates.push(feature.name);
    } else this.importedNames.push(feature.name);
    info.flags |= IMPORTED;
    const staged: StagedFeature = {
      name: feature.name,
      description: feature.description ?? null,
      type: feature.type ?? 'release',
      stale: feature.stale ?? false,
      impressionData: feature.impressionData ?? false,
      archived: feature.archived ?? false,
    };
    await this.stage(info, 'features', staged);
  }

  private async strategy(strategy: ImportedStrategy): Promise<void> {
    this.strategyCount++;
    this.strategyTypes.add(strategy.name);
    for (const id of strategy.segments ?? []) this.usedSegmentIds.add(id);
    const name = strategy.featureName;
    // A strategy that names no feature is checked for its type and segments, and left out.
    if (!name) return;
    const info = this.nameInfo(name);
    info.flags |= BY_STRATEGY;
    const variants = importedWeights(strategy.variants ?? []);
    if (variants === 'no-variable') this.problem('noVariable', 0, name, `strategy ${strategy.name} of ${name}`);
    else if (variants === 'over') this.problem('over', 0, name, `strategy ${strategy.name} of ${name}`);
    for (const constraint of strategy.constraints ?? []) {
      const field = this.catalogue.contextFields.get(constraint.contextName);
      if (field === undefined) {
        this.keep(constraint);
        this.pendingConstraints.push({ seq: this.seq++, feature: name, constraint });
        continue;
      }
      const problem = constraintProblem(constraint, field.legalValues.length > 0 ? new Set(field.legalValues) : undefined);
      if (problem) this.problem('invalidConstraints', 0, name, constraintText(name, constraint, problem));
    }
    await this.stage(info, 'strategies', stageStrategy(strategy, name, Array.isArray(variants) ? variants : []));
  }

  private async environment(environment: NonNullable<ImportData['featureEnvironments']>[number]): Promise<void> {
    if ((environment.variants ?? []).length > 0) this.environmentVariants = true;
    const name = environment.featureName;
    if (!name) return;
    const info = this.nameInfo(name);
    info.flags |= BY_ENVIRONMENT;
    const variants = importedWeights(environment.variants ?? []);
    if (variants === 'no-variable') this.problem('noVariable', 1, name, name);
    else if (variants === 'over') this.problem('over', 1, name, name);
    const staged: StagedEnvironment = {
      featureName: name,
      enabled: environment.enabled,
      variants: Array.isArray(variants) ? variants.map(toVariantDoc) : [],
    };
    if (environment.enabled) staged.autoId = crypto.randomUUID();
    await this.stage(info, 'environments', staged);
  }

  private async tag(tag: NonNullable<ImportData['featureTags']>[number]): Promise<void> {
    const info = this.nameInfo(tag.featureName);
    info.flags |= BY_TAG;
    const type = tag.tagType ?? tag.type;
    if (type === undefined) return;
    this.usedTagTypes.add(type);
    const staged: StagedTag = { featureName: tag.featureName, type, value: tag.tagValue };
    await this.stage(info, 'tags', staged);
  }

  /**
   * A flag's links. Unleash clears the links of every flag `data.links` names, then adds each
   * link in order, checking the flag exists, then the limit of links, then the URL.
   */
  private async links(entry: NonNullable<ImportData['links']>[number]): Promise<void> {
    const info = this.nameInfo(entry.feature);
    info.flags |= BY_LINK;
    const staged: StagedLinks = { feature: entry.feature, links: [] };
    for (const link of entry.links) {
      const seq = this.linkSeq++;
      info.firstLink ??= seq;
      const count = info.links ?? 0;
      if (count >= LINKS_PER_FEATURE) this.linkFailed(seq, tooManyLinks());
      const normalised = normaliseUrl(link.url);
      if (normalised === null) this.linkFailed(seq, badData(`Invalid URL: ${link.url}`));
      info.links = count + 1;
      // Unleash stores `link.title || undefined`: an empty title is no title.
      if (normalised) staged.links.push({ id: ulid(), url: normalised.url, title: link.title || null, domain: normalised.domain });
    }
    if (this.linkProblem === null) await this.stage(info, 'links', staged);
  }

  private linkFailed(seq: number, error: ApiError): void {
    this.linkProblem ??= { seq, error };
  }

  private problem(list: FeatureProblem['list'], rank: number, feature: string, text: string): void {
    this.keep(text);
    this.problems.push({ list, rank, seq: this.seq++, feature, text });
  }
}

export function constraintText(feature: string, constraint: ImportedConstraint, problem: string): string {
  return `${feature}: ${constraint.contextName} ${constraint.operator} (${problem})`;
}

function stageStrategy(
  strategy: ImportedStrategy,
  featureName: string,
  variants: ImportedVariant[] | StagedStrategy['variants'],
): StagedStrategy {
  const parameters: Record<string, string | null> = { ...(strategy.parameters ?? {}) };
  if (strategy.name === 'flexibleRollout') {
    parameters.rollout ??= '100';
    parameters.stickiness ??= null;
    parameters.groupId ??= featureName;
  }
  return {
    id: crypto.randomUUID(),
    featureName,
    name: strategy.name,
    title: strategy.title ?? null,
    parameters,
    constraints: (strategy.constraints ?? []).map((constraint) => ({
      contextName: constraint.contextName,
      operator: constraint.operator,
      caseInsensitive: constraint.caseInsensitive ?? false,
      inverted: constraint.inverted ?? false,
      values: constraint.values ?? [],
      ...(constraint.value === undefined ? {} : { value: constraint.value }),
    })),
    variants: variants as StagedStrategy['variants'],
    sortOrder: strategy.sortOrder ?? 9999,
    disabled: strategy.disabled ?? false,
    segments: [...new Set(strategy.segments ?? [])],
  };
}

/** Ranks a detail's path the way valibot walks the import schema: known keys in schema order, then the rest. */
function rankOf(path: string): number[] {
  const parts = path.split('/').slice(2);
  const [top, key, index] = parts;
  const topRank = top === 'project' ? 0 : top === 'environment' ? 1 : top === 'data' ? 2 : 3;
  if (top !== 'data' || key === undefined) return [topRank];
  const keyRank = DATA_KEY_ORDER.indexOf(key);
  return [topRank, keyRank === -1 ? DATA_KEY_ORDER.length : keyRank, index === undefined ? -1 : Number(index) || 0];
}

function compareRanks(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const difference = (a[i] ?? -1) - (b[i] ?? -1);
    if (difference !== 0) return difference;
  }
  return 0;
}

/** An imported environment variant as stored: Unleash's defaults filled in. */
function toVariantDoc(variant: ImportedVariant): VariantDoc {
  const doc: VariantDoc = {
    name: variant.name,
    weight: variant.weight,
    weightType: variant.weightType ?? 'variable',
    stickiness: variant.stickiness ?? 'default',
  };
  if (variant.payload) doc.payload = variant.payload;
  if (variant.overrides) doc.overrides = variant.overrides;
  return doc;
}
