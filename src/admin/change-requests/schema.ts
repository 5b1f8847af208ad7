/** Schemas of change requests: the bodies the UI sends and the answers it reads (Unleash Enterprise's shapes). */
import * as v from 'valibot';
import { nonBlank, text } from '../../http/validation';

const CHANGE_ACTIONS = [
  'updateEnabled',
  'addStrategy',
  'updateStrategy',
  'deleteStrategy',
  'reorderStrategy',
  'patchVariant',
  'archiveFeature',
  'addDependency',
  'deleteDependency',
  'updateSegment',
  'deleteSegment',
] as const;
export type ChangeAction = (typeof CHANGE_ACTIONS)[number];

/** The actions on a segment (the UI sends them with `feature: null`), not on a flag. */
export const SEGMENT_ACTIONS: readonly string[] = ['updateSegment', 'deleteSegment'] satisfies ChangeAction[];

const STATES = ['Draft', 'In review', 'Approved', 'Scheduled', 'Applied', 'Rejected', 'Cancelled'] as const;
export type ChangeRequestState = (typeof STATES)[number];

/** How many approvals a change request needs: 1 to 10, the choices Unleash's UI offers. */
export const ApprovalCount = v.pipe(
  v.number(),
  v.integer('must be integer'),
  v.minValue(1, 'must be >= 1'),
  v.maxValue(10, 'must be <= 10'),
);

export const EnvironmentConfigBody = v.object({
  changeRequestsEnabled: v.boolean(),
  requiredApprovals: v.optional(v.nullable(ApprovalCount)),
});

export const EnvironmentConfigList = v.array(
  v.object({
    environment: v.string(),
    type: v.string(),
    changeRequestEnabled: v.boolean(),
    requiredApprovals: v.number(),
  }),
);

const OneChange = v.object({
  // null for a segment's change; a flag's changes need it (service.ts).
  feature: v.optional(v.nullable(nonBlank(255)), null),
  action: v.picklist(CHANGE_ACTIONS, `must be one of ${CHANGE_ACTIONS.join(', ')}`),
  payload: v.optional(v.record(v.string(), v.unknown()), {}),
});

/** One change, or several at once (the UI's bulk archive sends one per flag). */
export const AddChangeBody = v.union([OneChange, v.pipe(v.array(OneChange), v.minLength(1), v.maxLength(100))]);

export const EditChangeBody = v.object({
  action: v.optional(v.picklist(CHANGE_ACTIONS, `must be one of ${CHANGE_ACTIONS.join(', ')}`)),
  feature: v.optional(v.nullable(nonBlank(255))),
  payload: v.record(v.string(), v.unknown()),
});

export const StateBody = v.object({
  state: v.picklist(['In review', 'Approved', 'Applied', 'Scheduled', 'Rejected', 'Cancelled'], 'is not a state a request can be moved to'),
  comment: v.optional(text(10_000)),
  scheduledAt: v.optional(v.pipe(v.string(), v.isoTimestamp('must be an ISO 8601 date-time'))),
});

export const TitleBody = v.object({ title: nonBlank(255) });
export const CommentBody = v.object({ text: nonBlank(10_000) });

const Person = v.object({ id: v.number(), username: v.string(), imageUrl: v.nullable(v.string()) });

const Change = v.object({
  id: v.number(),
  action: v.string(),
  payload: v.record(v.string(), v.unknown()),
  conflict: v.optional(v.string()),
  createdBy: Person,
  createdAt: v.string(),
});

const SegmentChange = v.object({ ...Change.entries, name: v.string() });

const Schedule = v.object({
  status: v.picklist(['pending', 'failed']),
  scheduledAt: v.string(),
  failureReason: v.optional(v.nullable(v.string())),
  reason: v.optional(v.string()),
});

export const ChangeRequestAnswer = v.object({
  id: v.number(),
  title: v.string(),
  project: v.string(),
  environment: v.string(),
  state: v.picklist(STATES),
  minApprovals: v.number(),
  createdBy: Person,
  createdAt: v.string(),
  features: v.array(v.object({ name: v.string(), conflict: v.optional(v.string()), changes: v.array(Change) })),
  segments: v.array(SegmentChange),
  approvals: v.array(v.object({ createdBy: Person, createdAt: v.string() })),
  rejections: v.array(v.object({ createdBy: Person, createdAt: v.string() })),
  comments: v.array(
    v.object({
      id: v.number(),
      text: v.string(),
      createdBy: v.object({ username: v.string(), imageUrl: v.nullable(v.string()) }),
      createdAt: v.string(),
    }),
  ),
  stateTimestamps: v.record(v.string(), v.string()),
  schedule: v.optional(Schedule),
});

export const ChangeRequestList = v.array(ChangeRequestAnswer);

export const CountAnswer = v.object({
  applied: v.number(),
  approved: v.number(),
  rejected: v.number(),
  scheduled: v.number(),
  reviewRequired: v.number(),
  total: v.number(),
});

export const ActionableAnswer = v.object({ total: v.number() });

export const ScheduledQuery = v.object({
  strategyId: v.optional(text(100)),
  variantForFlag: v.optional(text(255)),
});

export const ScheduledAnswer = v.array(v.object({ id: v.number(), environment: v.string(), title: v.optional(v.string()) }));
