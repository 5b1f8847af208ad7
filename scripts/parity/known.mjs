// The parity sweep's known differences (scripts/parity-sweep.mjs, docs/parity.md).
// ---------------------------------------------------------------------------------------------
// Differences that are known and explained (docs/decisions.md, the seed, or the oracle's own
// timing): printed with their reason so that new ones stand out. [path, line, reason]
const KNOWN = [
  [
    /api-tokens/,
    /tokens\[\]: keys only in ours: id|tokens\[\]: key order/,
    'seed ApiToken order; public token id (decisions.md, API tokens)',
  ],
  [/./, /seenAt: type oracle=null ours=string/, 'the oracle writes last-seen times on a timer'],
  [/./, /lastSeenAt: type oracle=null ours=string/, 'the oracle writes last-seen times on a timer'],
  [/^\/api\/admin\/user$/, /keys missing in ours: secret/, 'we never echo the key (decisions.md, People)'],
  [
    /user\/profile|personal-dashboard|user\/roles/,
    /status oracle=500|^\$: keys (missing in|only in) ours/,
    'the oracle answers an admin API key with 500; we answer',
  ],
  [/personal-dashboard$/, /\.flags: array/, "flags the oracle's admin made for others' tests"],
  [/^\/invite\/\{token\}\/validate$/, /content-type/, 'refusals have a JSON body (decisions.md, invite links)'],
  [/invite-link/, /role/, "seed's Role (decisions.md, invite links)"],
  [/search\/features/, /favorite|tags|environment|status|segments/, 'search item keys (decisions.md, Features)'],
  [/events/, /\.tags/, "events show the flag's current tags (decisions.md)"],
  [/metrics\/applications$/, /project, environment/, "Unleash's join artefact left out (decisions.md, Applications)"],
  [
    /strategies|features\/\{featureName\}$|segments/,
    /(strategies)?\[\]: keys only in ours: featureName|strategies\[\]: key order|^\$: keys only in ours: featureName|^\$: key order oracle=\[id, name, constraints|^\[\]: key order oracle=\[id, name, constraints/,
    "seed's Strategy (key order, featureName)",
  ],
  [/strategies/, /milestoneId/, 'release plans (milestoneId) are Enterprise'],
  [
    /./,
    /constraints\[\]: key order oracle=\[values, inverted, operator, contextName, caseInsensitive\]/,
    "seed's Constraint order (the oracle's is Postgres jsonb's)",
  ],
  [
    /./,
    /variants\[\]: key order oracle=\[name, weight, payload, stickiness, weightType\]/,
    "seed's StrategyVariant order (the oracle's is jsonb's)",
  ],
  [/./, /parameters: key order/, "parameters keep the order they were sent in (the oracle's is jsonb's)"],
  [/instance-admin\/statistics$/, /apiTokens: key order/, "the oracle's order is its GROUP BY's, unordered"],
  [/flag-creators/, /no counterpart/, 'creators of what others made on the shared oracle'],
  [/search\/events/, /feature-environment-enabled\): no counterpart/, 'the oracle matches the query in tags stored with events'],
  [/^\/api\/admin\/user\/tokens$/, /note:/, 'personal tokens need a person'],
  [/^\/api\/admin\/user$/, /splash: keys/, 'splash pages others marked seen on the shared oracle'],
  [
    /^\/api\/admin\/user$/,
    /deletedSessions, activeSessions/,
    'not built: 6.10.1 caps a person at 5 sessions and reports the cap at sign-in (docs/parity.md)',
  ],
  [/overview {2}\[unknown/, /./, 'an unknown application is 404 (decisions.md, Applications)'],
  [
    /api-tokens {2}\[unknown \{projectId\}\]/,
    /status oracle=403 ours=404|permissions|message oracle="You don't have/,
    "6.10.1 refuses a signed-in admin 403 over a project that does not exist; we say it's not there (404)",
  ],
  [/\/status$/, /averageDays: type oracle=number ours=null/, 'averages over what others made on the shared oracle'],
  [
    /overview$|insights$|dora$/,
    /featureTypeCounts\[\]: no counterpart|features: array oracle=\d+ ours=0/,
    'what others made on the shared oracle',
  ],
  [
    /invite-link\/tokens$|search\/events/,
    /tokens\[\]: no counterpart|public-signup-token-created\): no counterpart/,
    "an invite link from an earlier run under another name (at most one link; a fresh state has the oracle's name)",
  ],
  [
    /projects|instance-admin\/statistics$/,
    /keys only in ours: (technicalDebt|onboardingStatus|linkTemplates|releaseTemplates|backend)/,
    "Unleash 8's keys, which the 6.10.1 UI ignores (decisions.md, Unleash 8.x additions)",
  ],
  [/instance-admin\/statistics\/csv/, /first line/, "Unleash 8's columns (decisions.md, Unleash 8.x additions)"],
];

// Against 8.2.0 (--v8), besides the above: where 6.10.1 and 8.2.0 answer differently, the
// 6.10.1 UI we serve wins unless 8.x only adds what that UI ignores (docs/parity.md,
// "Unleash 8.2.0").
const KNOWN_V8 = [
  [/./, /^\$: keys only in ours: id$/, "8.2.0's error bodies have no id; we keep 6.10.1's {id, name, message, details}"],
  [
    /events/,
    /keys missing in ours: groupType, groupId/,
    '8.x groups the events of one request (groupType transaction, a ULID); not kept, the 6.10.1 UI does not read it',
  ],
  [/./, /keys missing in ours: secure$/, "v2 tokens' `secure` (helper v8tokens, issue 35)"],
  [/events/, /\.data: keys only in ours: username$/, "6.10.1's token event data (the seed's ApiToken has username)"],
  [/events/, /\.data: keys only in ours: lastSeenAt$/, "6.10.1's flag event data (8.x dropped the flag's lastSeenAt)"],
  [
    /features|health-report|applications\/\{appName\}$/,
    /keys only in ours: lastSeenAt(, variants)?$/,
    "6.10.1's flag keys (8.x dropped the flag-level lastSeenAt and variants; the 6.10.1 UI reads them)",
  ],
  [
    /projects\/\{projectId\}\/(features|health-report)$/,
    /\.features\[\]: keys missing in ours: favorite$/,
    '6.10.1 leaves `favorite` out for API keys; a person gets it (--session)',
  ],
  [/applications\/\{appName\}$/, /instances\[\]: keys missing in ours: sdkType/, "8.x's SDK type of an instance: not kept"],
  [
    /applications\/\{appName\}\/overview$/,
    /missingFeatures: array oracle=0 ours=1/,
    'the seeded unknown flag: 8.2.0 keeps no metrics of names that are not flags (they are unknown flags); we list it as reported but missing',
  ],
  [/user|user-admin/, /keys only in ours: isAPI$/, "the seed's User (6.10.1's keys)"],
  [
    /user-admin/,
    /keys missing in ours: seatType, companyRole, productUpdatesEmailConsent/,
    "the seed's User; 8.x's seat keys are Enterprise (null)",
  ],
  [/user\/profile/, /status oracle=400 ours=200/, '8.2.0 refuses an admin API key here (400); we answer'],
  [/ui-config/, /./, "the UI we serve is 6.10.1's: its ui-config and flags are what that UI reads"],
  [/insights$/, /^(\$|\.health): key order/, "6.10.1's key order (the UI we serve)"],
  [/segments\/\{id\}\/strategies {2}\[unknown/, /./, "6.10.1 answers an unknown segment's strategies 200 with empty lists"],
  [/search\/events/, /public-signup-token-created/, 'invite events name the invite by secretPrefix, never its secret (decisions.md)'],
  [
    /search\/events/,
    /feature-link-added\): no counterpart|context-field-created\): keys missing in ours: groupType/,
    'the oracle matches the query in tags stored with events; events group (above)',
  ],
  [/^\/api\/admin\/user\/profile$/, /keys (missing in|only in) ours/, '8.2.0 refuses an admin API key here (400); we answer'],
];

export function known(label, line, v8 = false) {
  const path = label.replace(/ {2}\[unknown \{\w+\}\]$/, '');
  const bare = line.replace(/ \([a-z-]+\):/, ':'); // without an event's type label
  const lists = v8 ? [...KNOWN_V8, ...KNOWN] : KNOWN;
  return lists.find(([p, l]) => (p.test(path) || p.test(label)) && (l.test(line) || l.test(bare)))?.[2];
}
