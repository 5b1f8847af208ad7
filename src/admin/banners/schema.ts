/**
 * Message banners (Unleash Enterprise's Admin → Banners): the body its `createBannerSchema`
 * describes and the banner as its `bannerSchema` answers it.
 */
import * as v from 'valibot';
import { integerId, text } from '../../http/validation';

/** The variants the UI has colours for (it draws any other name as info). */
const BANNER_VARIANTS = ['info', 'warning', 'error', 'success'] as const;

/**
 * Where the banner's action goes: nothing (`""`), the banner's own dialog (`dialog`), a page of
 * this UI (`/admin/...`) or an http(s) address. Anything else (`javascript:`, `data:`) would be
 * put in a link every signed-in person may click, so it is refused.
 */
const BannerLink = v.pipe(
  text(2000),
  v.check(
    (link) => link === '' || link === 'dialog' || link.startsWith('/') || /^https?:\/\/[^\s/]/i.test(link),
    'must be empty, "dialog", a path starting with "/" or an http(s) URL',
  ),
);

/** `text` that is not only spaces (the message is what the banner shows). */
const Message = v.pipe(
  text(10_000),
  v.check((message) => message.trim() !== '', 'must not be empty'),
);

/** A banner as created or changed; keys Unleash does not know are ignored. */
export const BannerInputSchema = v.object({
  message: Message,
  enabled: v.optional(v.boolean()),
  variant: v.optional(v.picklist(BANNER_VARIANTS, `must be one of ${BANNER_VARIANTS.join(', ')}`)),
  sticky: v.optional(v.boolean()),
  icon: v.optional(v.nullable(text(100))),
  link: v.optional(v.nullable(BannerLink)),
  linkText: v.optional(v.nullable(text(255))),
  dialogTitle: v.optional(v.nullable(text(255))),
  dialog: v.optional(v.nullable(text(10_000))),
});
export type BannerInput = v.InferOutput<typeof BannerInputSchema>;

/** A banner id in the path. */
export const BannerIdParams = v.object({ id: integerId });

/** One banner, in Unleash's key order. */
export const BannerSchema = v.object({
  id: v.number(),
  message: v.string(),
  enabled: v.boolean(),
  variant: v.string(),
  sticky: v.boolean(),
  icon: v.nullable(v.string()),
  link: v.nullable(v.string()),
  linkText: v.nullable(v.string()),
  dialogTitle: v.nullable(v.string()),
  dialog: v.nullable(v.string()),
  createdAt: v.string(),
});
export type Banner = v.InferOutput<typeof BannerSchema>;

/** What `GET /api/admin/banners` answers: every banner, oldest first. */
export const BannersSchema = v.object({ banners: v.array(BannerSchema) });
