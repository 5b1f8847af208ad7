/**
 * SCIM filters (RFC 7644 §3.4.2.2), parsed in one linear pass with bounded length and depth:
 * comparisons (`eq ne co sw ew gt ge lt le`), `pr`, `and`/`or`/`not`, parentheses, and value
 * paths (`emails[type eq "work"].value eq "x"`, `members[value eq "id"]`). The store turns the
 * tree into SQL over the attributes it supports; anything else is a 400 `invalidFilter`.
 */
import { invalidFilter } from './errors';

export type CompareOp = 'eq' | 'ne' | 'co' | 'sw' | 'ew' | 'gt' | 'ge' | 'lt' | 'le';
export type FilterValue = string | number | boolean | null;

export type Filter =
  | { kind: 'and' | 'or'; left: Filter; right: Filter }
  | { kind: 'not'; filter: Filter }
  /** `path op value`; `where` is the bracket filter of a value path (`emails[type eq "work"].value`). */
  | { kind: 'compare'; path: string; op: CompareOp; value: FilterValue; where?: Filter }
  | { kind: 'present'; path: string; where?: Filter }
  /** `members[value eq "x"]`: some value of a multi-valued attribute matches. */
  | { kind: 'some'; attribute: string; filter: Filter };

const MAX_FILTER_LENGTH = 2048;
const MAX_DEPTH = 16;
const COMPARE_OPS = new Set<string>(['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le']);
const CORE_PREFIXES = ['urn:ietf:params:scim:schemas:core:2.0:user:', 'urn:ietf:params:scim:schemas:core:2.0:group:'];

type Token = { kind: 'punct'; text: '(' | ')' | '[' | ']' } | { kind: 'string'; value: string } | { kind: 'word'; text: string };

const WORD = /[A-Za-z0-9:._$+-]/;

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  while (at < text.length) {
    const char = text[at]!;
    if (char === ' ' || char === '\t' || char === '\n' || char === '\r') {
      at++;
    } else if (char === '(' || char === ')' || char === '[' || char === ']') {
      tokens.push({ kind: 'punct', text: char });
      at++;
    } else if (char === '"') {
      let end = at + 1;
      while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      if (end >= text.length) throw invalidFilter('The filter has a string without its closing quote.');
      try {
        tokens.push({ kind: 'string', value: JSON.parse(text.slice(at, end + 1)) as string });
      } catch {
        throw invalidFilter('The filter has a string with an invalid escape.');
      }
      at = end + 1;
    } else if (WORD.test(char)) {
      let end = at;
      while (end < text.length && WORD.test(text[end]!)) end++;
      tokens.push({ kind: 'word', text: text.slice(at, end) });
      at = end;
    } else {
      throw invalidFilter(`The filter has an unexpected character at position ${at + 1}.`);
    }
  }
  return tokens;
}

/** `urn:…:core:2.0:User:userName` -> `username`: paths compare case-insensitively (RFC 7643 §2.1). */
export function normalisePath(path: string): string {
  const lower = path.toLowerCase();
  for (const prefix of CORE_PREFIXES) if (lower.startsWith(prefix)) return lower.slice(prefix.length);
  return lower;
}

class Parser {
  private at = 0;
  constructor(private readonly tokens: Token[]) {}

  parse(): Filter {
    const filter = this.or(0);
    if (this.at < this.tokens.length) throw invalidFilter('The filter has text after its end.');
    return filter;
  }

  private peekWord(): string | undefined {
    const token = this.tokens[this.at];
    return token?.kind === 'word' ? token.text.toLowerCase() : undefined;
  }

  private expectPunct(text: string): void {
    const token = this.tokens[this.at];
    if (token?.kind !== 'punct' || token.text !== text) throw invalidFilter(`The filter is missing a "${text}".`);
    this.at++;
  }

  private or(depth: number): Filter {
    let left = this.and(depth);
    while (this.peekWord() === 'or') {
      this.at++;
      left = { kind: 'or', left, right: this.and(depth) };
    }
    return left;
  }

  private and(depth: number): Filter {
    let left = this.unary(depth);
    while (this.peekWord() === 'and') {
      this.at++;
      left = { kind: 'and', left, right: this.unary(depth) };
    }
    return left;
  }

  private unary(depth: number): Filter {
    if (depth > MAX_DEPTH) throw invalidFilter('The filter is nested too deeply.');
    const token = this.tokens[this.at];
    if (token === undefined) throw invalidFilter('The filter ends too early.');
    if (token.kind === 'word' && token.text.toLowerCase() === 'not') {
      this.at++;
      this.expectPunct('(');
      const filter = this.or(depth + 1);
      this.expectPunct(')');
      return { kind: 'not', filter };
    }
    if (token.kind === 'punct' && token.text === '(') {
      this.at++;
      const filter = this.or(depth + 1);
      this.expectPunct(')');
      return filter;
    }
    if (token.kind !== 'word') throw invalidFilter('The filter expects an attribute name.');
    this.at++;
    return this.attribute(token.text, depth);
  }

  private attribute(name: string, depth: number): Filter {
    let path = normalisePath(name);
    let where: Filter | undefined;
    const next = this.tokens[this.at];
    if (next?.kind === 'punct' && next.text === '[') {
      this.at++;
      where = this.or(depth + 1);
      this.expectPunct(']');
      const sub = this.tokens[this.at];
      if (sub?.kind === 'word' && sub.text.startsWith('.')) {
        path = `${path}${sub.text.toLowerCase()}`;
        this.at++;
      } else if (!COMPARE_OPS.has(this.peekWord() ?? '') && this.peekWord() !== 'pr') {
        return { kind: 'some', attribute: path, filter: where };
      }
    }
    const op = this.peekWord();
    if (op === 'pr') {
      this.at++;
      return { kind: 'present', path, ...(where ? { where } : {}) };
    }
    if (op === undefined || !COMPARE_OPS.has(op)) throw invalidFilter(`The filter expects an operator after "${name.slice(0, 100)}".`);
    this.at++;
    return { kind: 'compare', path, op: op as CompareOp, value: this.value(), ...(where ? { where } : {}) };
  }

  private value(): FilterValue {
    const token = this.tokens[this.at++];
    if (token?.kind === 'string') return token.value;
    if (token?.kind === 'word') {
      const word = token.text.toLowerCase();
      if (word === 'true') return true;
      if (word === 'false') return false;
      if (word === 'null') return null;
      if (/^-?\d+(\.\d+)?$/.test(word)) return Number(word);
    }
    throw invalidFilter('The filter expects a value: a quoted string, a number, true, false or null.');
  }
}

/** The filter of a list request, or a 400 invalidFilter. */
export function parseFilter(text: string): Filter {
  if (text.length > MAX_FILTER_LENGTH) throw invalidFilter(`The filter is longer than ${MAX_FILTER_LENGTH} characters.`);
  if (!text.isWellFormed()) throw invalidFilter('The filter is not well-formed text.');
  return new Parser(tokenize(text)).parse();
}

function valueAt(values: Readonly<Record<string, FilterValue>>, path: string): FilterValue | undefined {
  return Object.hasOwn(values, path) ? values[path] : undefined;
}

/**
 * Whether a filter holds for one object of known values (the sub-attributes of our single work
 * email, `{type: 'work', primary: true}`): a bracket filter over values we hold as constants.
 */
export function holdsFor(filter: Filter, values: Readonly<Record<string, FilterValue>>): boolean {
  switch (filter.kind) {
    case 'and':
      return holdsFor(filter.left, values) && holdsFor(filter.right, values);
    case 'or':
      return holdsFor(filter.left, values) || holdsFor(filter.right, values);
    case 'not':
      return !holdsFor(filter.filter, values);
    case 'present':
      return valueAt(values, filter.path) !== undefined && valueAt(values, filter.path) !== null;
    case 'compare': {
      const actual = valueAt(values, filter.path);
      const equal =
        typeof actual === 'string' && typeof filter.value === 'string'
          ? actual.toLowerCase() === filter.value.toLowerCase()
          : actual === filter.value;
      if (filter.op === 'eq') return equal;
      if (filter.op === 'ne') return !equal;
      throw invalidFilter(`"${filter.op}" is not supported on ${filter.path}.`);
    }
    case 'some':
      throw invalidFilter('A nested value filter is not supported here.');
  }
}
