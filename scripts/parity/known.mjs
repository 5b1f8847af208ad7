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
];

export function known(label, line) {
  const path = label.replace(/ {2}\[unknown \{\w+\}\]$/, '');
  const bare = line.replace(/ \([a-z-]+\):/, ':'); // without an event's type label
  return KNOWN.find(([p, l]) => (p.test(path) || p.test(label)) && (l.test(line) || l.test(bare)))?.[2];
}
