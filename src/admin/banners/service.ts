/**
 * Message banners: shown to every signed-in person at the top of each page of the UI while
 * enabled; each change records `banner-created`, `banner-updated` or `banner-deleted` (the
 * event types Unleash writes), so integrations hear of them like any other event.
 */
import type { Db } from '../../db/client';
import type { Actor } from '../../db/events';
import { notFound } from '../../http/errors';
import type { Banner, BannerInput } from './schema';
import * as store from './store';

function bannerShape(row: store.BannerRow): Banner {
  return {
    id: row.id,
    message: row.message,
    enabled: row.enabled,
    variant: row.variant,
    sticky: row.sticky,
    icon: row.icon,
    link: row.link,
    linkText: row.linkText,
    dialogTitle: row.dialogTitle,
    dialog: row.dialog,
    createdAt: row.createdAt,
  };
}

function missing(id: number) {
  return notFound(`Could not find banner with id ${id}`);
}

async function requireBanner(db: Db, id: number): Promise<store.BannerRow> {
  const row = await store.byId(db, id);
  if (!row) throw missing(id);
  return row;
}

/** The values a body sets; what it leaves out keeps `base` (the defaults when creating). */
function valuesOf(input: BannerInput, base: store.BannerValues): store.BannerValues {
  const pick = <K extends keyof store.BannerValues>(key: K): store.BannerValues[K] =>
    (input[key] === undefined ? base[key] : input[key]) as store.BannerValues[K];
  return {
    message: input.message,
    enabled: pick('enabled'),
    variant: pick('variant'),
    sticky: pick('sticky'),
    icon: pick('icon'),
    link: pick('link'),
    linkText: pick('linkText'),
    dialogTitle: pick('dialogTitle'),
    dialog: pick('dialog'),
  };
}

const DEFAULTS: store.BannerValues = {
  message: '',
  enabled: true,
  variant: 'info',
  sticky: false,
  icon: null,
  link: null,
  linkText: null,
  dialogTitle: null,
  dialog: null,
};

export async function listBanners(db: Db): Promise<{ banners: Banner[] }> {
  return { banners: (await store.all(db)).map(bannerShape) };
}

export async function createBanner(db: Db, actor: Actor, input: BannerInput): Promise<Banner> {
  return bannerShape(await store.insert(db, actor, valuesOf(input, DEFAULTS)));
}

async function rewrite(db: Db, actor: Actor, before: store.BannerRow, values: store.BannerValues): Promise<Banner> {
  const after = bannerShape({ ...before, ...values });
  const written = await store.update(db, actor, before.id, values, {
    type: 'banner-updated',
    data: after,
    preData: bannerShape(before),
  });
  // Deleted between the read and the write: nothing was written.
  if (!written) throw missing(before.id);
  return after;
}

/** Replaces what the body sends; fields it leaves out keep their values. */
export async function updateBanner(db: Db, actor: Actor, id: number, input: BannerInput): Promise<Banner> {
  const before = await requireBanner(db, id);
  return rewrite(db, actor, before, valuesOf(input, before));
}

/**
 * Shows (`on`) or hides (`off`) the banner. As a flag environment switched to the state it is
 * in, a banner already in that state changes nothing and records no event.
 */
export async function setEnabled(db: Db, actor: Actor, id: number, enabled: boolean): Promise<Banner> {
  const before = await requireBanner(db, id);
  if (before.enabled === enabled) return bannerShape(before);
  return rewrite(db, actor, before, valuesOf({ message: before.message, enabled }, before));
}

export async function deleteBanner(db: Db, actor: Actor, id: number): Promise<void> {
  const before = await requireBanner(db, id);
  if (!(await store.remove(db, actor, id, { type: 'banner-deleted', preData: bannerShape(before) }))) throw missing(id);
}
