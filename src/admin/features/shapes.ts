/**
 * How a flag and its strategies are answered and recorded in events, in 6.10.1's key orders:
 * one copy for the flag's own routes, its sub-resources (strategies, environments), segments
 * and the search.
 */
import { gravatarUrl } from '../../identity/users/gravatar';
import type { FeatureRow, StrategyRow } from './store';

export type { FeatureRow, StrategyRow };

/** A flag as 6.10.1 answers its creation and records it in `feature-created`, in its key order. */
export function flagFields(
  row: Pick<
    FeatureRow,
    'name' | 'description' | 'type' | 'project' | 'stale' | 'createdAt' | 'lastSeenAt' | 'impressionData' | 'archivedAt'
  >,
) {
  return {
    name: row.name,
    description: row.description,
    type: row.type,
    project: row.project,
    stale: row.stale,
    createdAt: row.createdAt,
    lastSeenAt: row.lastSeenAt,
    impressionData: row.impressionData,
    archived: row.archivedAt !== null,
  };
}

export function featureSummary(row: FeatureRow) {
  return { ...flagFields(row), archivedAt: row.archivedAt };
}

export interface CreatorRow {
  id: number;
  name: string | null;
  username: string | null;
  email: string | null;
}

/** Unleash's `createdBy`: id, display name and a gravatar URL built from email or name. */
export async function creatorOf(userId: number | null, user: CreatorRow | undefined) {
  const name = user?.name || user?.username || user?.email || 'unknown';
  return { id: user?.id ?? userId ?? 0, name, imageUrl: await gravatarUrl((user?.email || name).toLowerCase()) };
}

export function strategyShape(row: StrategyRow, segmentIds: number[]) {
  return {
    id: row.id,
    name: row.strategyName,
    title: row.title,
    disabled: row.disabled,
    featureName: row.featureName,
    sortOrder: row.sortOrder,
    segments: segmentIds,
    constraints: row.constraints,
    variants: row.variants,
    parameters: row.parameters,
  };
}

/**
 * A strategy as 6.10.1 records it in `feature-strategy-*` events' `data`/`preData`: its own
 * key order, without `featureName` (the event names the flag).
 */
export function strategyEventData(
  row: Pick<StrategyRow, 'id' | 'strategyName' | 'title' | 'constraints' | 'parameters' | 'variants' | 'sortOrder'> & {
    disabled?: boolean | null;
  },
  segmentIds: number[],
) {
  return {
    id: row.id,
    name: row.strategyName,
    title: row.title,
    disabled: row.disabled ?? false,
    constraints: row.constraints ?? [],
    parameters: row.parameters,
    variants: row.variants ?? [],
    sortOrder: row.sortOrder,
    segments: segmentIds,
  };
}
