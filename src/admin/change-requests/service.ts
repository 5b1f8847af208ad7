/**
 * Change requests: the per-environment settings, drafts (one per person, project and
 * environment) and their changes, titles, comments and the lists the UI shows. State moves
 * and applying are in states.ts.
 */
import type { Db, Statement } from '../../db/client';
import { runBatch } from '../../db/client';
import { auditEvent, type Actor } from '../../db/events';
import { requireProject } from '../../db/lookups';
import { requireAnyPermission, type PermissionHolder } from '../../auth/permissions';
import { badRequest, notFound } from '../../http/errors';
import { ACTION_PERMISSION, draftPayload } from './changes';
import { SEGMENT_ACTIONS, type ChangeAction } from './schema';
import * as store from './store';
import { describe, describeOne, requireRequest } from './view';

type Caller = Actor & PermissionHolder;

const OPEN = ['Draft', 'In review', 'Approved', 'Scheduled'];

export function nowIso(): string {
  return new Date().toISOString();
}

/** An event of a request, with what integrations name it by. */
export function requestEvent(db: Db, actor: Actor, row: store.ChangeRequestRow, type: string, data: Record<string, unknown> = {}) {
  return auditEvent(db, actor, {
    type,
    project: row.project,
    environment: row.environment,
    data: { changeRequestId: row.id, changeRequestTitle: row.title ?? `Change request #${row.id}`, ...data },
  });
}

/**
 * How every write to one request ends (after loading it in its project and checking the
 * caller, state and permission): its statements and the request's event, in one batch.
 */
async function commit(
  db: Db,
  caller: Actor,
  row: store.ChangeRequestRow,
  statements: Statement[],
  type: string,
  data?: Record<string, unknown>,
) {
  await runBatch(db, [...statements, requestEvent(db, caller, row, type, data)]);
}

export async function getConfig(db: Db, project: string) {
  await requireProject(db, project, `Could not find project ${project}`);
  const rows = await store.projectSettings(db, project);
  return rows.map((row) => ({
    environment: row.environment,
    type: row.type,
    changeRequestEnabled: row.enabled ?? false,
    requiredApprovals: row.requiredApprovals ?? 1,
  }));
}

export async function setConfig(db: Db, actor: Actor, project: string, environment: string, enabled: boolean, requiredApprovals: number) {
  const config = await getConfig(db, project);
  if (!config.some((row) => row.environment === environment))
    throw notFound(`Environment ${environment} is not enabled in project ${project}`);
  await runBatch(db, [
    store.upsertSettings(db, project, environment, enabled, requiredApprovals),
    auditEvent(db, actor, {
      type: 'change-request-configuration-updated',
      project,
      environment,
      data: { changeRequestsEnabled: enabled, requiredApprovals },
    }),
  ]);
}

/** Change requests on where the project's newly attached environments predefine approvals (see store.predefineSettings). */
export function predefinedSettings(db: Db, project: string, environment?: string): Statement {
  return store.predefineSettings(db, project, environment);
}

/**
 * The settings a new project is created with (the create dialog's `changeRequestEnvironments`),
 * for the create's batch, after the predefined ones (which win for their environment, as in Unleash).
 */
export function chosenSettings(db: Db, project: string, chosen: readonly { name: string; requiredApprovals: number }[]): Statement[] {
  return chosen.map((environment) => store.enableSettingsIfAbsent(db, project, environment.name, environment.requiredApprovals));
}

async function requireEnabled(db: Db, project: string, environment: string) {
  const config = await getConfig(db, project);
  const settings = config.find((row) => row.environment === environment);
  if (!settings?.changeRequestEnabled)
    throw badRequest(`Change requests are not enabled for environment ${environment} in project ${project}`);
  return settings;
}

interface NewChange {
  feature?: string | null | undefined;
  action: ChangeAction;
  payload: Record<string, unknown>;
}

/** The flag a change is stored under: none ('') for a segment's change; a flag's change must name one. */
function featureOf(action: ChangeAction, feature: string | null | undefined): string {
  if (SEGMENT_ACTIONS.includes(action)) return '';
  if (!feature) throw badRequest(`feature is required for a change of type ${action}`);
  return feature;
}

/** What a change's events say it touched. */
function touched(change: { feature: string; action: string; payload: Record<string, unknown> }) {
  return change.feature === ''
    ? { segmentId: change.payload.id, action: change.action }
    : { feature: change.feature, action: change.action };
}

/** Adds changes to the caller's draft in the environment (made on the first change). Answers the draft. */
export async function addChange(db: Db, caller: Caller, project: string, environment: string, body: NewChange | NewChange[]) {
  const list = Array.isArray(body) ? body : [body];
  for (const change of list) requireAnyPermission(caller, ACTION_PERMISSION[change.action], project, environment);
  const settings = await requireEnabled(db, project, environment);
  const drafted = [];
  for (const change of list) {
    const target = { project, environment, feature: featureOf(change.action, change.feature) };
    drafted.push({
      feature: target.feature,
      action: change.action,
      ...(await draftPayload(db, caller, target, change.action, change.payload)),
    });
  }
  let draft = await store.findDraft(db, project, environment, caller.userId);
  const statements: Statement[] = [];
  if (!draft) {
    draft = await store.insertRequest(db, {
      project,
      environment,
      state: 'Draft',
      minApprovals: settings.requiredApprovals,
      createdByUserId: caller.userId,
      createdByName: caller.actorName,
      stateTimestamps: { Draft: nowIso() },
    });
    statements.push(requestEvent(db, caller, draft, 'change-request-created'));
  }
  for (const { feature, action, payload, base } of drafted) {
    statements.push(
      store.insertChange(db, { changeRequestId: draft.id, feature, action, payload, base: base ?? null, createdByUserId: caller.userId }),
      requestEvent(db, caller, draft, 'change-added', touched({ feature, action, payload })),
    );
  }
  await runBatch(db, statements);
  return describeOne(db, draft);
}

/** Only the author edits a request, and only before it is approved; an edit in review takes back the approvals. */
async function requireEditable(db: Db, caller: Caller, project: string, id: number) {
  const row = await requireRequest(db, project, id);
  if (row.createdByUserId !== caller.userId) throw badRequest('Only the author of a change request may change it');
  if (row.state !== 'Draft' && row.state !== 'In review')
    throw badRequest(`A change request in state ${row.state} can no longer be changed`);
  return row;
}

function resetReviews(db: Db, row: store.ChangeRequestRow): Statement[] {
  return row.state === 'In review' ? [store.clearReviews(db, row.id)] : [];
}

export async function editChange(
  db: Db,
  caller: Caller,
  project: string,
  id: number,
  changeId: number,
  body: { action?: ChangeAction | undefined; feature?: string | null | undefined; payload: Record<string, unknown> },
) {
  const row = await requireEditable(db, caller, project, id);
  const [change] = (await store.changesOf(db, [row.id])).filter((candidate) => candidate.id === changeId);
  if (!change) throw notFound(`Could not find change ${changeId} in change request ${id}`);
  const action = (body.action ?? change.action) as ChangeAction;
  if (!(action in ACTION_PERMISSION)) throw badRequest(`Unknown change action ${action}`);
  requireAnyPermission(caller, ACTION_PERMISSION[action], project, row.environment);
  const feature = featureOf(action, body.feature === undefined ? change.feature : body.feature);
  const { payload, base } = await draftPayload(db, caller, { project, environment: row.environment, feature }, action, body.payload);
  const statements = [
    store.updateChange(db, row.id, change.id, { action, feature, payload, base: base ?? null }),
    ...resetReviews(db, row),
  ];
  await commit(db, caller, row, statements, 'change-edited', touched({ feature, action, payload }));
}

export async function discardChange(db: Db, caller: Caller, project: string, id: number, changeId: number) {
  const row = await requireEditable(db, caller, project, id);
  const changes = await store.changesOf(db, [row.id]);
  if (!changes.some((change) => change.id === changeId)) throw notFound(`Could not find change ${changeId} in change request ${id}`);
  // A draft left without changes is discarded with its last one, as Unleash does.
  const last = changes.length === 1 && row.state === 'Draft';
  const statements = last ? [store.deleteRequest(db, row.id)] : [store.deleteChange(db, row.id, changeId), ...resetReviews(db, row)];
  await commit(db, caller, row, statements, last ? 'change-request-discarded' : 'change-discarded', { changeId });
}

export async function discardDraft(db: Db, caller: Caller, project: string, id: number) {
  const row = await requireRequest(db, project, id);
  if (row.createdByUserId !== caller.userId) throw badRequest('Only the author of a change request may discard it');
  if (row.state !== 'Draft') throw badRequest(`Only a draft can be discarded; this change request is ${row.state}`);
  await commit(db, caller, row, [store.deleteRequest(db, row.id)], 'change-request-discarded');
}

export async function setTitle(db: Db, caller: Caller, project: string, id: number, title: string) {
  const row = await requireEditable(db, caller, project, id);
  await commit(db, caller, { ...row, title }, [store.updateRequest(db, row.id, { title })], 'change-request-title-updated');
}

export async function addComment(db: Db, caller: Caller, project: string, id: number, text: string) {
  const row = await requireRequest(db, project, id);
  const comment = store.insertComment(db, {
    changeRequestId: row.id,
    text,
    createdByUserId: caller.userId,
    createdByName: caller.actorName,
  });
  await commit(db, caller, row, [comment], 'change-request-comment-added');
}

export async function getRequest(db: Db, project: string, id: number) {
  return describeOne(db, await requireRequest(db, project, id));
}

/** The project's requests; a draft shows only to its author. */
export async function listRequests(db: Db, caller: Actor, project: string, states?: readonly string[]) {
  await requireProject(db, project, `Could not find project ${project}`);
  const rows = await store.requestsOf(db, project, states);
  return describe(
    db,
    rows.filter((row) => row.state !== 'Draft' || row.createdByUserId === caller.userId),
  );
}

/**
 * Open requests: without a flag, the caller's own (the UI's "review your changes" sidebar lists
 * each as theirs to send or discard); with one, everyone's that change it (drafts only their author's).
 */
export async function pendingRequests(db: Db, caller: Actor, project: string, feature?: string) {
  const open = await listRequests(db, caller, project, OPEN);
  return feature === undefined
    ? open.filter((request) => request.createdBy.id === caller.userId)
    : open.filter((request) => request.features.some((candidate) => candidate.name === feature));
}

export async function countRequests(db: Db, project: string) {
  await requireProject(db, project, `Could not find project ${project}`);
  const counts = new Map((await store.countByState(db, project)).map((row) => [row.state, Number(row.count)]));
  const of = (state: string) => counts.get(state) ?? 0;
  const answer = {
    applied: of('Applied'),
    approved: of('Approved'),
    rejected: of('Rejected'),
    scheduled: of('Scheduled'),
    reviewRequired: of('In review'),
  };
  return { ...answer, total: answer.applied + answer.approved + answer.rejected + answer.scheduled + answer.reviewRequired };
}

/** Requests waiting for the caller: others' in review (to approve), approved ones (to apply). */
export async function actionable(db: Db, caller: Actor, project: string) {
  await requireProject(db, project, `Could not find project ${project}`);
  const rows = await store.requestsOf(db, project, ['In review', 'Approved']);
  return { total: rows.filter((row) => row.state === 'Approved' || row.createdByUserId !== caller.userId).length };
}

/** Scheduled requests touching a strategy or a flag's variants (the UI warns before editing them). */
export async function scheduledTouching(db: Db, project: string, query: { strategyId?: string; variantForFlag?: string }) {
  const rows = await store.requestsOf(db, project, ['Scheduled']);
  if (rows.length === 0) return [];
  const changes = await store.changesOf(
    db,
    rows.map((row) => row.id),
  );
  const touching = new Set(
    changes
      .filter((change) =>
        query.strategyId !== undefined
          ? change.payload.id === query.strategyId
          : query.variantForFlag !== undefined && change.action === 'patchVariant' && change.feature === query.variantForFlag,
      )
      .map((change) => change.changeRequestId),
  );
  return rows
    .filter((row) => touching.has(row.id))
    .map((row) => ({ id: row.id, environment: row.environment, ...(row.title ? { title: row.title } : {}) }));
}
