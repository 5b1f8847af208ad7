/**
 * Flag links (Unleash 7.0+, open source since 7.0; 6.10.1 had them behind a flag that is off):
 * the body Unleash's `linkSchema` accepts and the link as the flag read lists it.
 */
import * as v from 'valibot';
import { text } from '../../http/validation';

/**
 * Unleash coerces scalars to the string its schema asks for (`title: 5` is stored as "5"), so a
 * number or boolean is taken as its text; objects and arrays are refused.
 */
const coercedText = (max: number) =>
  v.pipe(
    v.unknown(),
    v.transform((value) => (typeof value === 'number' || typeof value === 'boolean' ? String(value) : value)),
    text(max),
  );

/** `{url, title?}`; other keys are ignored, as Unleash's schema allows them. */
export const LinkSchema = v.object({
  url: coercedText(10_000),
  title: v.optional(v.nullable(coercedText(10_000))),
});
export type LinkInput = v.InferOutput<typeof LinkSchema>;

/** One link in a flag's `links`, in Unleash's key order. */
export const FeatureLinkSchema = v.object({
  id: v.string(),
  url: v.string(),
  title: v.nullable(v.string()),
  feature: v.string(),
});
export type FeatureLink = v.InferOutput<typeof FeatureLinkSchema>;
