// The people steps of the copy (scripts/migrate/copy.mjs): users (with the links file of their
// reset links) and API tokens.
import { openSync, writeSync, closeSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import * as read from './source.mjs';
import { same } from './flags.mjs';

/** What our listings show of a secret: up to 6 characters after its last dot (src/auth/secrets.ts). */
function secretPrefix(secret) {
  const dot = secret.lastIndexOf('.');
  return dot >= 0 ? secret.slice(0, dot + 7) : secret.slice(0, 6);
}

export async function copyUsers({ source, target, report, options, mine, write, log }) {
  const sourceAnswer = await source.get('/api/admin/user-admin');
  const users = (await read.readUsers(source)).filter((user) => mine(user.username ?? user.email));
  const sourceRoleNames = new Map((sourceAnswer.rootRoles ?? []).map((role) => [role.id, role.name]));
  const ourAnswer = await target.get('/api/admin/user-admin');
  const ourRoleIds = new Map((ourAnswer.rootRoles ?? []).map((role) => [role.name, role.id]));
  const key = (user) => (user.email ? `e:${user.email.toLowerCase()}` : `u:${user.username}`);
  const ours = new Map();
  for (const user of ourAnswer.users) {
    if (user.email) ours.set(`e:${user.email.toLowerCase()}`, user);
    if (user.username) ours.set(`u:${user.username}`, user);
  }
  report.count('users', 'read', users.length);
  let linksFile = null;
  for (const user of users) {
    const name = user.username ?? user.email;
    try {
      const roleName = sourceRoleNames.get(user.rootRole);
      const rootRole = roleName ? ourRoleIds.get(roleName) : undefined;
      if (rootRole === undefined) {
        report.cannotCopy(
          'users',
          name,
          `root role ${roleName ?? user.rootRole} does not exist here`,
          'create the role, then re-run the migration',
        );
        continue;
      }
      const existing = ours.get(key(user)) ?? (user.username ? ours.get(`u:${user.username}`) : undefined);
      const wanted = { name: user.name ?? null, email: user.email ?? null, rootRole };
      if (existing) {
        const current = { name: existing.name ?? null, email: existing.email ?? null, rootRole: existing.rootRole };
        if (same(wanted, current)) report.count('users', 'unchanged');
        else if (!options.overwrite) report.conflict('users', name, { source: wanted, target: current });
        else {
          await write(
            'users',
            name,
            () =>
              target.send('PUT', `/api/admin/user-admin/${existing.id}`, {
                ...(user.name ? { name: user.name } : {}),
                ...(user.email ? { email: user.email } : {}),
                rootRole,
              }),
            'updated',
          );
        }
        continue;
      }
      await write(
        'users',
        name,
        async () => {
          await target.post('/api/admin/user-admin', {
            ...(user.username ? { username: user.username } : {}),
            ...(user.email ? { email: user.email } : {}),
            ...(user.name ? { name: user.name } : {}),
            rootRole,
            sendEmail: false,
          });
          if (!user.email) {
            report.cannotCopy(
              'user passwords',
              name,
              'no email: no reset link can be made',
              'set a password for this user in the admin UI, or let them sign in with SSO',
            );
            return;
          }
          const { resetPasswordUrl } = await target.post('/api/admin/user-admin/reset-password', { id: user.email });
          linksFile ??= openLinksFile(options.linksFile);
          writeSync(linksFile, `${user.email}\t${resetPasswordUrl}\n`);
        },
        'created',
      );
    } catch (error) {
      if (!report.failures.some((failure) => failure.name === name)) report.fail('users', name, error);
    }
  }
  if (linksFile !== null) {
    closeSync(linksFile);
    log(`  reset links for new users written to ${options.linksFile} (mode 0600; hand each link to its owner)`);
  }
  report.progress('users');
}

function openLinksFile(file) {
  mkdirSync(path.dirname(file), { recursive: true });
  // 0600 from the first byte: created with that mode, never widened.
  return openSync(file, 'a', 0o600);
}

/**
 * Whether a listed secret is the secret itself. Unleash shows it whole for its classic tokens
 * (`*:development.<hex>`, where `*` is the all-projects part, and `[]:` for several projects);
 * 8.1+ shows a v2 token (`secure`) by its selector only.
 */
export function readableSecret(token) {
  if (token.secure === true || !token.secret) return false;
  const dot = token.secret.indexOf('.');
  const key = dot >= 0 && /^[^:]+:[^.]+$/.test(token.secret.slice(0, dot)) ? token.secret.slice(dot + 1) : token.secret;
  return !/\*/.test(key) && !/^v2_/.test(key);
}

const tokenScope = (projects) => (projects.length === 1 ? projects[0] : '[]');

export async function copyTokens({ source, target, report, options, mine, write }) {
  const tokens = (await read.readApiTokens(source)).filter((token) => mine(token.tokenName ?? token.username));
  report.count('api tokens', 'read', tokens.length);
  const ourTokens = (await target.get('/api/admin/api-tokens')).tokens;
  const v2 = new Map((options.v2Tokens ?? []).map((token) => [token.selector, token]));
  for (const token of tokens) {
    const name = token.tokenName ?? token.username;
    try {
      const type = String(token.type).toLowerCase();
      const projects = token.projects ?? [token.project];
      let given;
      if (readableSecret(token)) {
        given = { secret: token.secret, listed: `${secretPrefix(token.secret)}***` };
      } else {
        const stored = token.secure === true ? v2.get(token.secret) : undefined;
        if (!stored) {
          report.cannotCopy(
            'api tokens',
            `${name} (${type}, ${token.environment})`,
            token.secure === true
              ? 'an Unleash 8.1+ v2 token: the API shows only its selector, its verifier is in the database'
              : 'the source does not show this secret',
            token.secure === true
              ? "re-run with --from-db <the source's PostgreSQL URL> (read only) to keep it, or issue a new token here"
              : 'issue a new token here and give it to the services that use this one',
          );
          continue;
        }
        given = {
          selector: stored.selector,
          verifier: stored.verifier,
          listed: `${tokenScope(projects)}:${token.environment}.v2_${stored.selector}***`,
        };
      }
      const wanted = {
        type,
        environment: token.environment,
        projects: [...projects].sort(),
        expiresAt: token.expiresAt ?? null,
      };
      // Found by the listed handle (`<scope>:<env>.<6 hex>***<id>`, `….v2_<selector>***<id>`) and
      // name: the secret itself never travels in a URL. A secret taken by another token answers 409 below.
      const existing = ourTokens.find((listed) => listed.secret.startsWith(given.listed) && listed.tokenName === name) ?? null;
      const body = {
        ...(given.secret ? { secret: given.secret } : { selector: given.selector, verifier: given.verifier }),
        tokenName: name,
        type,
        environment: token.environment,
        ...(type === 'admin' ? {} : { projects }),
        ...(token.expiresAt ? { expiresAt: token.expiresAt } : {}),
      };
      if (existing) {
        const current = {
          type: existing.type,
          environment: existing.environment,
          projects: [...existing.projects].sort(),
          expiresAt: existing.expiresAt ?? null,
        };
        if (same(wanted, current)) {
          report.count('api tokens', 'unchanged');
          continue;
        }
        if (!options.overwrite) {
          report.conflict('api tokens', name, { source: wanted, target: current });
          continue;
        }
        await write('api tokens', name, async () => {
          await target.send('DELETE', `/api/admin/api-tokens/${existing.id}`);
          await target.post('/api/admin/api-tokens/import', body);
        });
        report.count('api tokens', 'updated');
        continue;
      }
      if (options.dryRun) {
        report.count('api tokens', 'created');
        continue;
      }
      const created = await target.send('POST', '/api/admin/api-tokens/import', body, { allowed: [409] });
      if (created.status === 409) report.conflict('api tokens', name, 'a token with this secret exists here under another name');
      else report.count('api tokens', 'created');
    } catch (error) {
      if (!report.failures.some((failure) => failure.name === name)) report.fail('api tokens', name, error);
    }
  }
  report.progress('api tokens');
}
