/**
 * Flag links: up to ten URLs per flag, each with an optional title, written with an audit event
 * (`feature-link-added`, `-updated`, `-removed`) as Unleash 8.2.0 writes them.
 */
import type { Db } from '../../db/client';
import type { Actor } from '../../db/events';
import { ApiError, badData, conflict, notFound } from '../../http/errors';
import type { FeatureLink, LinkInput } from './schema';
import * as store from './store';

/** Unleash's default limit of links per flag. */
export const LINKS_PER_FEATURE = 10;

const SCHEME = /^([a-z][a-z0-9+-]*):/i;

/**
 * A link's URL as Unleash stores it: trimmed; without a scheme it becomes `https://…`; an http(s)
 * URL is parsed and written back without credentials, default port or a trailing slash; other
 * schemes (`mailto:`, `ftp://`) are kept as written. Null when it is not a URL.
 */
export function normaliseUrl(raw: string): { url: string; domain: string | null } | null {
  const trimmed = raw.trim();
  const scheme = SCHEME.exec(trimmed)?.[1]?.toLowerCase();
  if (scheme !== undefined && scheme !== 'http' && scheme !== 'https') return { url: trimmed, domain: null };
  // `http:x.com` is refused by Unleash although WHATWG parsing would accept it.
  if (scheme !== undefined && !/^[a-z]+:\/\//i.test(trimmed)) return null;
  let parsed: URL;
  try {
    parsed = new URL(scheme === undefined ? `https://${trimmed}` : trimmed);
  } catch {
    return null;
  }
  const text = `${parsed.protocol}//${parsed.host}${parsed.pathname}${parsed.search}${parsed.hash}`;
  return { url: text.endsWith('/') ? text.slice(0, -1) : text, domain: parsed.hostname };
}

function linkShape(row: store.LinkRow): FeatureLink {
  return { id: row.id, url: row.url, title: row.title, feature: row.featureName };
}

/** A flag's links as its read lists them (the flag read checks the flag itself). */
export async function linksOf(db: Db, featureName: string): Promise<FeatureLink[]> {
  return (await store.ofFeature(db, featureName)).map(linkShape);
}

/** The flag, in this project and not archived (Unleash: 404 naming the flag). */
async function requireFeature(db: Db, projectId: string, name: string) {
  const feature = await store.featureOf(db, name);
  if (!feature || feature.project !== projectId || feature.archivedAt !== null) {
    throw notFound(`Could not find feature with name ${name}`);
  }
  return feature;
}

function urlOf(input: LinkInput) {
  const normalised = normaliseUrl(input.url);
  if (!normalised) throw badData(`Invalid URL: ${input.url}`);
  return normalised;
}

export function tooManyLinks(): ApiError {
  return new ApiError(403, 'OperationDeniedError', `Too many links (${LINKS_PER_FEATURE}) exist for this feature`);
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
let lastTime = 0;
let lastRandom: number[] = [];

/**
 * Unleash's id for a link, a ULID: 48 bits of milliseconds then 80 random bits, in Crockford
 * base32. Within one millisecond the random part counts up, so ids keep creation order.
 */
export function ulid(now = Date.now()): string {
  let random: number[];
  if (now <= lastTime && lastRandom.length === 16) {
    now = lastTime;
    random = [...lastRandom];
    for (let i = 15; i >= 0; i -= 1) {
      random[i] = (random[i]! + 1) % 32;
      if (random[i] !== 0) break;
    }
  } else {
    random = [...crypto.getRandomValues(new Uint8Array(16))].map((byte) => byte % 32);
  }
  lastTime = now;
  lastRandom = random;
  let time = '';
  for (let i = 0, t = now; i < 10; i += 1, t = Math.floor(t / 32)) time = CROCKFORD[t % 32] + time;
  return time + random.map((digit) => CROCKFORD[digit]).join('');
}

export async function addLink(db: Db, actor: Actor, projectId: string, featureName: string, input: LinkInput, titleGiven: boolean) {
  const feature = await requireFeature(db, projectId, featureName);
  // Unleash checks the limit before the URL.
  if ((await store.countOf(db, featureName)) >= LINKS_PER_FEATURE) throw tooManyLinks();
  const { url, domain } = urlOf(input);
  const title = input.title ?? null;
  const added = await store.insertIfRoom(db, actor, { id: ulid(), featureName, url, title, domain }, LINKS_PER_FEATURE, {
    type: 'feature-link-added',
    project: feature.project,
    featureName,
    // Unleash's event carries the body as sent: `title` only when it was given.
    data: titleGiven ? { url, title } : { url },
  });
  if (!added) {
    await requireFeature(db, projectId, featureName);
    throw tooManyLinks();
  }
}

/** The link, on this flag (Unleash: 404 `No item with id …`). */
async function requireLink(db: Db, featureName: string, id: string) {
  const link = await store.byId(db, id);
  // Unleash 8.2.0 would move another flag's link here; a link is only reached through its own flag.
  if (!link || link.featureName !== featureName) throw notFound(`No item with id ${id}`);
  return link;
}

export async function updateLink(db: Db, actor: Actor, projectId: string, featureName: string, id: string, input: LinkInput) {
  const feature = await requireFeature(db, projectId, featureName);
  const before = await requireLink(db, featureName, id);
  const { url, domain } = urlOf(input);
  // A PUT without `title` keeps the title, as Unleash's does.
  const title = input.title === undefined ? before.title : input.title;
  const written = await store.update(
    db,
    actor,
    { id, featureName, url, title, domain },
    {
      type: 'feature-link-updated',
      project: feature.project,
      featureName,
      data: { url, title },
      preData: { url: before.url, title: before.title },
    },
  );
  if (!written) {
    await requireLink(db, featureName, id);
    throw conflict(`The link ${id} changed while it was being written; try again.`);
  }
}

export async function removeLink(db: Db, actor: Actor, projectId: string, featureName: string, id: string) {
  const feature = await requireFeature(db, projectId, featureName);
  const before = await requireLink(db, featureName, id);
  const removed = await store.remove(db, actor, id, featureName, {
    type: 'feature-link-removed',
    project: feature.project,
    featureName,
    preData: { url: before.url, title: before.title },
  });
  if (!removed) throw notFound(`No item with id ${id}`);
}
