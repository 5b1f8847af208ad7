// `npm run bench -- import`: import throughput at 1k, 10k and 100k flags in this checkout
// (sizes.mjs); `npm run bench -- import --against <commit>`: this checkout, that commit and
// Unleash importing the same payload in one run (side.mjs).
import { againstArgument } from '../against.mjs';

await import(againstArgument() ? './side.mjs' : './sizes.mjs');
