/**
 * Flag dependencies (Unleash's dependent features): a child flag depends on one parent in its
 * project, optionally on some of the parent's variants. One level only, as Unleash allows,
 * which also rules out every cycle.
 */
import type { Db } from '../../db/client';
import { runBatch } from '../../db/client';
import { auditEvent, type Actor, type AuditEvent } from '../../db/events';
import { refuseUnlessMaySkipChangeRequestsInProject } from '../../db/change-request-guard';
import type { PermissionHolder } from '../../auth/permissions';
import { conflict } from '../../http/errors';
import { findFeature, invalidOperation, requireFeature } from '../features/service';
import type { FeatureRow } from '../features/shapes';
import type { DependencyRequest } from './schema';
import * as store from './store';

export interface NewDependency {
  parent: string;
  child: Pick<FeatureRow, 'name' | 'project'>;
  enabled: boolean;
  variants: string[];
  /** The variants as the request named them, for the event (Unleash records them only then). */
  namedVariants?: string[] | undefined;
}

/**
 * The dependency write: gives the child its one parent only if both are still active and
 * neither link would be transitive — re-checked in SQL by every statement of the batch, so
 * that a parent archived (or a child made a parent) after the handler's checks leaves
 * nothing written, the child's old parent included. Returns whether it wrote.
 */
export async function linkIfAllowed(db: Db, actor: Actor, dependency: NewDependency): Promise<boolean> {
  const { parent, enabled, variants } = dependency;
  return store.linkIfAllowed(db, actor, { parent, child: dependency.child.name, enabled, variants }, addedEvent(dependency));
}

async function checkedDependency(db: Db, projectId: string, child: string, body: DependencyRequest) {
  const childFeature = await requireFeature(db, projectId, child);
  if (body.feature === child) throw invalidOperation('A feature flag cannot depend on itself.');
  const parent = await findFeature(db, body.feature);
  // 6.10.1's words and status for a parent that is missing or archived.
  if (!parent || parent.archivedAt !== null) throw invalidOperation(`No active feature ${body.feature} exists`);
  if (parent.project !== childFeature.project)
    throw invalidOperation('Dependencies are only allowed between features in the same project.');
  const [childLinks, parentLinks] = await Promise.all([store.dependencyLinks(db, child), store.dependencyLinks(db, body.feature)]);
  if (childLinks.asParent.length > 0 || parentLinks.asChild.length > 0) {
    throw invalidOperation('Transitive dependency detected. Cannot add a dependency to the feature that other features depend on.');
  }
  // The variants count only for an enabled dependency; the event names them only when the request did.
  const variants = body.enabled ? (body.variants ?? []) : [];
  return { parent: body.feature, child: childFeature, enabled: body.enabled, variants, namedVariants: body.variants };
}

function addedEvent(dependency: NewDependency): AuditEvent {
  const { parent, enabled, namedVariants } = dependency;
  return {
    type: 'feature-dependency-added',
    project: dependency.child.project,
    featureName: dependency.child.name,
    data: { feature: parent, enabled, ...(namedVariants !== undefined ? { variants: namedVariants } : {}) },
  };
}

export async function addDependency(db: Db, actor: Actor & PermissionHolder, projectId: string, child: string, body: DependencyRequest) {
  const dependency = await checkedDependency(db, projectId, child, body);
  await refuseUnlessMaySkipChangeRequestsInProject(db, actor, projectId);
  if (!(await linkIfAllowed(db, actor, dependency))) {
    // Something changed since the checks: they now say what.
    await checkedDependency(db, projectId, child, body);
    throw conflict(`The dependency of ${child} on ${body.feature} changed while it was being written; try again.`);
  }
}

/** A change request's dependency: the same checks, statements and event as the direct write. */
export async function addDependencyStatements(db: Db, actor: Actor, projectId: string, child: string, body: DependencyRequest) {
  const dependency = await checkedDependency(db, projectId, child, body);
  const { parent, enabled, variants } = dependency;
  return store.linkStatements(db, actor, { parent, child, enabled, variants }, addedEvent(dependency));
}

/** A change request's removal of the child's dependencies (one parent's, or all). */
export async function removeDependencyStatements(db: Db, actor: Actor, projectId: string, child: string, parent?: string) {
  const feature = await requireFeature(db, projectId, child);
  return [
    store.unlink(db, child, parent),
    auditEvent(db, actor, {
      type: parent === undefined ? 'feature-dependencies-removed' : 'feature-dependency-removed',
      project: feature.project,
      featureName: child,
      data: parent === undefined ? null : { feature: parent },
    }),
  ];
}

export async function removeDependency(db: Db, actor: Actor & PermissionHolder, projectId: string, child: string, parent?: string) {
  const statements = await removeDependencyStatements(db, actor, projectId, child, parent);
  await refuseUnlessMaySkipChangeRequestsInProject(db, actor, projectId);
  await runBatch(db, statements);
}

/** The variant names a child flag may depend on: the parent's strategy and environment variants. */
export async function possibleParentVariants(db: Db, parent: string): Promise<string[]> {
  return store.variantNames(db, parent);
}

/** The flags `child` could depend on (Unleash's parent options): none for an unknown flag. */
export async function parentOptions(db: Db, child: string): Promise<string[]> {
  return store.possibleParents(db, child);
}

/** The statement that links a new flag (a clone) to a parent, for the caller's batch. */
export function insertLink(db: Db, link: store.Link) {
  return store.insertLink(db, link);
}
