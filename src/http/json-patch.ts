/**
 * JSON Patch (RFC 6902), as Unleash's PATCH operations accept it: `add`, `remove`, `replace`,
 * `move`, `copy` and `test`, applied in order to a copy of the document. A patch that cannot
 * be applied is a 400 ("Could not apply provided patch: <why>") and nothing is changed.
 */
import * as v from 'valibot';
import { badRequest } from './errors';
import { text } from './validation';

export const JsonPatchSchema = v.pipe(
  v.array(
    v.object({
      op: v.picklist(['add', 'remove', 'replace', 'move', 'copy', 'test']),
      path: text(1000),
      from: v.optional(text(1000)),
      value: v.optional(v.unknown()),
    }),
  ),
  v.maxLength(100, 'must have at most 100 operations'),
);
export type JsonPatch = v.InferOutput<typeof JsonPatchSchema>;

class PatchError extends Error {}

function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new PatchError(`"${path}" is not a JSON pointer`);
  return path
    .slice(1)
    .split('/')
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
}

type Container = Record<string, unknown> | unknown[];

function isContainer(value: unknown): value is Container {
  return typeof value === 'object' && value !== null;
}

function arrayIndex(array: unknown[], token: string, path: string, forAdd: boolean): number {
  if (forAdd && token === '-') return array.length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new PatchError(`"${path}" does not name an array index`);
  const index = Number(token);
  if (index > array.length || (!forAdd && index === array.length)) throw new PatchError(`"${path}" is out of range`);
  return index;
}

/** The parent of what `path` names, and the last token. */
function locate(document: unknown, path: string): { parent: Container; key: string } {
  const tokens = pointer(path);
  if (tokens.length === 0) throw new PatchError('the whole document cannot be patched');
  let node: unknown = document;
  for (const token of tokens.slice(0, -1)) {
    if (Array.isArray(node)) node = node[arrayIndex(node, token, path, false)];
    else if (isContainer(node) && Object.hasOwn(node, token)) node = (node as Record<string, unknown>)[token];
    else throw new PatchError(`"${path}" does not exist`);
    if (!isContainer(node)) throw new PatchError(`"${path}" does not exist`);
  }
  if (!isContainer(node)) throw new PatchError(`"${path}" does not exist`);
  return { parent: node, key: tokens[tokens.length - 1]! };
}

function read(document: unknown, path: string): unknown {
  const { parent, key } = locate(document, path);
  if (Array.isArray(parent)) return parent[arrayIndex(parent, key, path, false)];
  if (!Object.hasOwn(parent, key)) throw new PatchError(`"${path}" does not exist`);
  return parent[key];
}

function add(document: unknown, path: string, value: unknown) {
  const { parent, key } = locate(document, path);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, key, path, true), 0, value);
  else parent[key] = value;
}

function remove(document: unknown, path: string): unknown {
  const { parent, key } = locate(document, path);
  if (Array.isArray(parent)) return parent.splice(arrayIndex(parent, key, path, false), 1)[0];
  if (!Object.hasOwn(parent, key)) throw new PatchError(`"${path}" does not exist`);
  const old = parent[key];
  delete parent[key];
  return old;
}

/** Applies `patch` to a deep copy of `document` and returns the result. */
export function applyJsonPatch<T>(document: T, patch: JsonPatch): unknown {
  const copy: unknown = structuredClone(document);
  try {
    for (const operation of patch) {
      const needsValue = operation.op === 'add' || operation.op === 'replace' || operation.op === 'test';
      if (needsValue && !('value' in operation)) throw new PatchError(`"${operation.op}" needs a value`);
      switch (operation.op) {
        case 'add':
          add(copy, operation.path, operation.value);
          break;
        case 'remove':
          remove(copy, operation.path);
          break;
        case 'replace':
          remove(copy, operation.path);
          add(copy, operation.path, operation.value);
          break;
        case 'move': {
          if (operation.from === undefined) throw new PatchError('"move" needs "from"');
          add(copy, operation.path, remove(copy, operation.from));
          break;
        }
        case 'copy': {
          if (operation.from === undefined) throw new PatchError('"copy" needs "from"');
          add(copy, operation.path, structuredClone(read(copy, operation.from)));
          break;
        }
        case 'test':
          if (JSON.stringify(read(copy, operation.path)) !== JSON.stringify(operation.value)) {
            throw new PatchError(`the test at "${operation.path}" failed`);
          }
          break;
      }
    }
  } catch (error) {
    if (error instanceof PatchError) throw badRequest(`Could not apply provided patch: ${error.message}`);
    throw error;
  }
  return copy;
}
