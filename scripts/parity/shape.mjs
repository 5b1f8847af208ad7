// The parity sweep's shape comparison (scripts/parity-sweep.mjs): key sets, key order, value
// types and the shape of array elements; `prefix` marks the objects the sweep seeded.

const typeOf = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

// Picks, from an array, the element that is about our seeded objects when there is one (the
// shared oracle lists what others created too), else the first.
function pick(arr, prefix) {
  const mine = arr.find((e) => JSON.stringify(e)?.includes(prefix));
  return mine === undefined ? arr[0] : mine;
}

// The element of `b` that stands for the same object as `ea`: for events the same type and
// flag, else the same name (token name, app name, …). Undefined when `ea` names an object
// `b` lacks; the first element when `ea` names nothing.
function counterpart(ea, b, prefix) {
  if (typeOf(ea) !== 'object') return pick(b, prefix);
  const keys = Object.keys(ea).join();
  // Among the candidates, the one with the same keys (a filled-in zero bucket and a real one
  // may share a name), else the first.
  const best = (candidates) => candidates.find((e) => Object.keys(e).join() === keys) ?? candidates[0];
  if (isEvent(ea)) {
    return best(b.filter((e) => e?.type === ea.type && e?.featureName === ea.featureName));
  }
  const key = ['name', 'tokenName', 'appName', 'featureName', 'email', 'type'].find((k) => typeof ea[k] === 'string');
  if (!key) return pick(b, prefix);
  return best(b.filter((e) => typeOf(e) === 'object' && e[key] === ea[key]));
}

const isEvent = (e) => typeOf(e) === 'object' && typeof e.type === 'string' && typeof e.createdBy === 'string';

export function compare(a, b, at, out, prefix) {
  const ta = typeOf(a);
  const tb = typeOf(b);
  if (ta !== tb) {
    out.push(
      `${at || '$'}: type oracle=${ta}${ta === 'string' ? ` (${JSON.stringify(a).slice(0, 40)})` : ''} ours=${tb}${tb === 'string' ? ` (${JSON.stringify(b).slice(0, 40)})` : ''}`,
    );
    return;
  }
  if (ta === 'array') {
    if (a.length === 0 || b.length === 0) {
      if (a.length !== b.length)
        out.push(`${at || '$'}: array oracle=${a.length} ours=${b.length} elements (shape of elements not compared)`);
      return;
    }
    // Every element about our seeded objects (at most 30) against its counterpart, else the
    // first elements; a difference is reported once per path.
    const mine = a.filter((e) => JSON.stringify(e)?.includes(prefix)).slice(0, 30);
    for (const ea of mine.length ? mine : [pick(a, prefix)]) {
      const found = [];
      const eb = counterpart(ea, b, prefix);
      if (eb === undefined) found.push(`${at}[]: no counterpart in ours`);
      else compare(ea, eb, `${at}[]`, found, prefix);
      const label = isEvent(ea) ? ` (${ea.type})` : '';
      for (const line of found) {
        const text = label ? line.replace(/^([^:]*):/, `$1${label}:`) : line;
        if (!out.includes(text)) out.push(text);
      }
    }
    return;
  }
  if (ta !== 'object') return;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  const onlyA = ka.filter((k) => !(k in b));
  const onlyB = kb.filter((k) => !(k in a));
  if (onlyA.length) out.push(`${at || '$'}: keys missing in ours: ${onlyA.join(', ')}`);
  if (onlyB.length) out.push(`${at || '$'}: keys only in ours: ${onlyB.join(', ')}`);
  const common = ka.filter((k) => k in b);
  const orderB = kb.filter((k) => k in a);
  if (common.join() !== orderB.join()) {
    out.push(`${at || '$'}: key order oracle=[${common.join(', ')}] ours=[${orderB.join(', ')}]`);
  }
  for (const k of common) compare(a[k], b[k], `${at}.${k}`, out, prefix);
}
