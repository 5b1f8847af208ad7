// `npm start` helper: a fresh clone has no .dev.vars (it is git-ignored); copy the example.
import { copyFileSync, existsSync } from 'node:fs';

if (!existsSync('.dev.vars')) {
  copyFileSync('.dev.vars.example', '.dev.vars');
  console.log('created .dev.vars from .dev.vars.example (local admin key: *:*.local-dev-admin-token)');
}
