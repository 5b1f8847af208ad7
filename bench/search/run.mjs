// `npm run bench -- search`: search at 10k and 100k flags in this checkout (sizes.mjs);
// `npm run bench -- search --against <commit>`: this checkout, that commit and Unleash on the
// same 10k flags in one run (side.mjs).
import { againstArgument } from '../against.mjs';

await import(againstArgument() ? './side.mjs' : './sizes.mjs');
